"""Source passages: JSON (an array of objects) or CSV, with ``paragraph_id``, ``isbn``, ``page``, ``text``."""

from __future__ import annotations

from pathlib import Path

from annotation.importers.base import ImportProblem, Limits, ParsedPassage, load_table

REQUIRED = ("paragraph_id", "text")


def parse_file(path: Path, limits: Limits, display: str | None = None) -> list[ParsedPassage]:
    display = display or path.name
    records = load_table(path, limits, display, required=REQUIRED, key="passages")
    passages, seen = [], {}
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise ImportProblem(display, "must be an object", record=index)
        for name in REQUIRED:
            value = record.get(name)
            if not isinstance(value, str) or not value.strip():
                raise ImportProblem(display, "missing or empty", record=index, field=name)
        pid = record["paragraph_id"].strip()
        if pid in seen:
            raise ImportProblem(
                display, f"duplicate paragraph_id {pid!r} (also record {seen[pid]})", record=index, field="paragraph_id"
            )
        seen[pid] = index
        passages.append(
            ParsedPassage(
                paragraph_id=pid,
                text=record["text"],
                isbn=str(record.get("isbn") or ""),
                page=str(record.get("page") if record.get("page") is not None else ""),
            )
        )
    return passages
