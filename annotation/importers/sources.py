"""Source passages: JSON (an array of objects) or CSV, with ``paragraph_id``, ``isbn``, ``page``, ``text``."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from annotation.importers.base import ImportProblem, Limits, ParsedPassage, load_json, read_text

REQUIRED = ("paragraph_id", "text")


def parse_file(path: Path, limits: Limits, display: str | None = None) -> list[ParsedPassage]:
    display = display or path.name
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(read_text(path, limits, display)))
        missing = [name for name in REQUIRED if name not in (reader.fieldnames or [])]
        if missing:
            raise ImportProblem(display, f"CSV header lacks column(s) {', '.join(missing)}", field=missing[0])
        records = list(reader)
    else:
        records = load_json(path, limits, display)
        if isinstance(records, dict) and isinstance(records.get("passages"), list):
            records = records["passages"]
        if not isinstance(records, list):
            raise ImportProblem(display, "expected a JSON array of passages")
    if len(records) > limits.max_records:
        raise ImportProblem(display, f"{len(records):,} records; the limit is {limits.max_records:,}")
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
            raise ImportProblem(display, f"duplicate paragraph_id {pid!r} (also record {seen[pid]})", record=index, field="paragraph_id")
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
