"""Shared pieces of the importers: the error type, parsed records, JSON loading with limits, content uids."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from portal.errors import DomainError


class ImportProblem(DomainError):
    """Bad input. The message always names the file, and the record index and field where they apply."""

    code = "bad_import"

    def __init__(self, file: str, message: str, *, record: int | None = None, field: str | None = None):
        self.file, self.record, self.field, self.detail = file, record, field, message
        where = [file]
        if record is not None:
            where.append(f"record {record}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {message}")

    def as_dict(self) -> dict:
        return {"file": self.file, "record": self.record, "field": self.field, "message": self.detail}


@dataclass
class ParsedItem:
    uid: str
    qa_type: str
    fields: dict
    raw: dict
    benchmark: str = "cliniqlink"
    file: str = ""
    record: int = 0


@dataclass
class ParsedPassage:
    paragraph_id: str
    text: str
    isbn: str = ""
    page: str = ""
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 100 * 1024 * 1024
    max_records: int = 200_000
    max_depth: int = 8


def content_uid(prefix: str, record: dict) -> str:
    """A stable uid from the record's content (canonical JSON), for formats without an id of their own."""
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return f"{prefix}-{hashlib.sha256(canonical.encode('utf-8')).hexdigest()[:20]}"


def read_text(path: Path, limits: Limits, display: str) -> str:
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise ImportProblem(display, f"file is {size:,} bytes; the limit is {limits.max_bytes:,} bytes")
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportProblem(display, f"not UTF-8 text (byte {exc.start})") from exc


def load_json(path: Path, limits: Limits, display: str):
    text = read_text(path, limits, display)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportProblem(display, f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
    check_depth(data, limits.max_depth, display)
    return data


def load_table(path: Path, limits: Limits, display: str, *, required: tuple[str, ...], key: str) -> list:
    """The records of a CSV file (header row naming ``required`` columns) or of a JSON array (also accepted wrapped
    as ``{key: [...]}``), within the record limit. Records are not checked beyond that: callers do it per field."""
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(read_text(path, limits, display)))
        missing = [name for name in required if name not in (reader.fieldnames or [])]
        if missing:
            raise ImportProblem(display, f"CSV header lacks column(s) {', '.join(missing)}", field=missing[0])
        records = list(reader)
    else:
        records = load_json(path, limits, display)
        if isinstance(records, dict) and isinstance(records.get(key), list):
            records = records[key]
        if not isinstance(records, list):
            raise ImportProblem(display, f"expected a JSON array of {key}")
    if len(records) > limits.max_records:
        raise ImportProblem(display, f"{len(records):,} records; the limit is {limits.max_records:,}")
    return records


def keyed_records(records: list, display: str, *, required: tuple[str, ...]):
    """Yield ``(index, record, key)`` for table records: each must be an object whose ``required`` fields are
    non-empty text; ``key`` is the first of them, stripped, and must not repeat."""
    seen: dict[str, int] = {}
    key_field = required[0]
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise ImportProblem(display, "must be an object", record=index)
        for name in required:
            value = record.get(name)
            if not isinstance(value, str) or not value.strip():
                raise ImportProblem(display, "missing or empty", record=index, field=name)
        key = record[key_field].strip()
        if key in seen:
            raise ImportProblem(
                display, f"duplicate {key_field} {key!r} (also record {seen[key]})", record=index, field=key_field
            )
        seen[key] = index
        yield index, record, key


def check_depth(value, max_depth: int, display: str) -> None:
    """Refuse deeply nested documents (they are never valid input and can exhaust memory)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise ImportProblem(display, f"nesting deeper than {max_depth} levels")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def require_str(record: dict, name: str, display: str, index: int, *, allow_empty: bool = False) -> str:
    if name not in record:
        raise ImportProblem(display, "missing", record=index, field=name)
    value = record[name]
    if not isinstance(value, str):
        raise ImportProblem(display, f"must be a string, not {type(value).__name__}", record=index, field=name)
    if not allow_empty and not value.strip():
        raise ImportProblem(display, "must not be empty", record=index, field=name)
    return value


def require_str_list(record: dict, name: str, display: str, index: int, *, min_len: int = 1) -> list[str]:
    if name not in record:
        raise ImportProblem(display, "missing", record=index, field=name)
    value = record[name]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ImportProblem(display, "must be a list of strings", record=index, field=name)
    if len(value) < min_len:
        raise ImportProblem(display, f"must have at least {min_len} entries", record=index, field=name)
    return value


def iter_jsonl(path: Path, limits: Limits, display: str):
    """``(record index, object)`` for each non-blank line of a JSONL file, with the shared checks: record limit,
    well-formed JSON, nesting depth, and each line an object."""
    for index, line in enumerate(line for line in read_text(path, limits, display).splitlines() if line.strip()):
        if index >= limits.max_records:
            raise ImportProblem(display, f"more than {limits.max_records:,} records")
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportProblem(display, f"malformed JSON: {exc.msg} (column {exc.colno})", record=index) from exc
        check_depth(record, limits.max_depth, display)
        if not isinstance(record, dict):
            raise ImportProblem(display, f"must be a JSON object, not {type(record).__name__}", record=index)
        yield index, record
