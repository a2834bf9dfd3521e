"""Source passages: JSON (an array of objects) or CSV, with ``paragraph_id``, ``isbn``, ``page``, ``text``."""

from __future__ import annotations

from pathlib import Path

from annotation.importers.base import Limits, ParsedPassage, keyed_records, load_table

REQUIRED = ("paragraph_id", "text")


def parse_file(path: Path, limits: Limits, display: str | None = None) -> list[ParsedPassage]:
    display = display or path.name
    records = load_table(path, limits, display, required=REQUIRED, key="passages")
    return [
        ParsedPassage(
            paragraph_id=pid,
            text=record["text"],
            isbn=str(record.get("isbn") or ""),
            page=str(record.get("page") if record.get("page") is not None else ""),
        )
        for _, record, pid in keyed_records(records, display, required=REQUIRED)
    ]
