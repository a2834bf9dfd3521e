"""Reading files and JSON bodies that people send: the error type, limits, strict JSON / JSONL / CSV loading,
field checks and content uids. Every app's importers (items, sources, gold lists, system outputs) and the API's
JSON parser share these, so one upload is refused for the same reasons wherever it arrives."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

from portal.errors import DomainError
from records.json_values import Refused, json_loads, place
from records.text import NotUtf8, refused_character, utf8_text


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


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 100 * 1024 * 1024
    max_records: int = 200_000
    max_depth: int = 8
    max_text_chars: int = 100_000


def content_uid(prefix: str, record: dict) -> str:
    """A stable uid from the record's content (canonical JSON), for formats without an id of their own."""
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return f"{prefix}-{hashlib.sha256(canonical.encode('utf-8')).hexdigest()[:20]}"


def require_size(path: Path, limits: Limits, display: str) -> None:
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise ImportProblem(display, f"file is {size:,} bytes; the limit is {limits.max_bytes:,} bytes")


def read_text(path: Path, limits: Limits, display: str) -> str:
    require_size(path, limits, display)
    try:
        return utf8_text(path.read_bytes())
    except NotUtf8 as exc:
        raise ImportProblem(display, f"line {exc.line}: {exc}") from None


# --- JSON and text values ------------------------------------------------------------------------------------
#
# One loader for every JSON document the portal reads from people (import files, JSONL lines, API bodies), built on
# the one parser (records.json_values: non-finite and huge numbers, repeated keys). The hazards it refuses would
# otherwise surface later as a crash (RecursionError, ValueError from int()), a database error (PostgreSQL text
# cannot hold NUL, UTF-8 cannot encode a lone surrogate, jsonb has no NaN) or a silently wrong value.

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_NUL_OR_ESCAPE = re.compile(r"\x00|\\u0000")
# Strings (skipped, with their escapes) and the characters that open, close or separate JSON containers.
_MAY_BE_REFUSED = re.compile("|".join(p.pattern for p in (_NUL_OR_ESCAPE, _SURROGATE, _SURROGATE_ESCAPE)))
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},]')


def value_problem(value, limits: Limits, depth: int = 0) -> tuple[list, str] | None:
    """The first bad value in a parsed document, as ``(path, reason)``: nesting deeper than allowed, a value the
    parser refused (a number that is not finite or too long, a key given twice: :mod:`records.json_values`), text
    over the length bound, a NUL character or a lone surrogate (in values or keys). None if clean."""
    stack: list[tuple[object, list]] = [(value, [])]
    while stack:
        node, path = stack.pop()
        if depth + len(path) >= limits.max_depth:
            return path, f"nesting deeper than {limits.max_depth} levels"
        if isinstance(node, Refused):
            return path, node.reason
        if isinstance(node, str):
            reason = text_problem(node, limits)
            if reason:
                return path, reason
        elif isinstance(node, dict):
            for key in node:
                reason = text_problem(key, limits)
                if reason:  # named by its place, not by itself: the key is what cannot be shown or stored
                    return path, f"has a key that {reason}"
            # Reversed so that the stack yields children in document order: the first problem is reported.
            stack.extend((child, path + [key]) for key, child in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((child, path + [index]) for index, child in reversed(list(enumerate(node))))
    return None


def _clean(value, limits: Limits, *, scan_chars: bool, depth: int = 0) -> bool:
    """True when :func:`value_problem` would find nothing; much faster (no paths are kept), so that the slow walk
    only runs to name the place of a problem. ``scan_chars=False``: the caller knows no string can hold a NUL or
    a lone surrogate (JSON text without such escapes cannot produce one)."""
    strings: list[str] = []
    stack = [(value, depth + 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            strings.extend(node)
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:  # a scalar document
            children = [node]
            depth -= 1
        if node and depth + 1 > limits.max_depth:
            return False
        for child in children:
            if isinstance(child, str):
                strings.append(child)
            elif isinstance(child, dict | list):
                stack.append((child, depth + 1))
            elif isinstance(child, Refused):
                return False
    if strings and max(map(len, strings)) > limits.max_text_chars:
        return False
    return not scan_chars or not any("\x00" in text or _SURROGATE.search(text) for text in strings)


def text_problem(text: str, limits: Limits) -> str | None:
    """Why ``text`` cannot be stored, or None: over the length bound, a NUL character, a lone surrogate."""
    if len(text) > limits.max_text_chars:
        # The message is for the person who sent the file: the limit, not the setting behind it (which is not
        # always the one in force: a field's own bound, such as an id's 100 characters, comes through here too).
        return f"is {len(text):,} characters long; the limit is {limits.max_text_chars:,}"
    return refused_character(text)


def check_values(
    value,
    limits: Limits,
    display: str,
    *,
    record: int | None = None,
    records: bool = True,
    scan_chars: bool = True,
    depth: int = 0,
) -> None:
    """Raise :class:`ImportProblem` for the first bad value (see :func:`value_problem`). With ``record`` the
    document is that record; without it and with ``records``, the first list index in a value's path is its
    record (the files are arrays of records, or objects holding such arrays), counted from 1. A document that
    holds no records (an API body) says ``records=False``."""
    if _clean(value, limits, scan_chars=scan_chars, depth=depth):
        return
    found = value_problem(value, limits, depth)
    if found is None:
        return
    path, reason = found
    if record is None and records:
        position = next((i for i, step in enumerate(path) if isinstance(step, int)), None)
        if position == 0 and len(path) > 1 and isinstance(path[1], int):
            # A ClinIQLink file may group its records in nested arrays, read flattened one level: count likewise.
            record = sum(len(e) if isinstance(e, list) else 1 for e in value[: path[0]]) + path[1] + 1
            path = path[2:]
        elif position is not None:
            record = path[position] + 1
            # responses (entry 3) → record 3, field 'responses'; inputs (entry 3).question → field 'question'
            path = path[position + 1 :] or path[:position]
    raise ImportProblem(display, reason, record=record, field=place(path) or None)


def parse_json(text: str, limits: Limits, display: str, *, record: int | None = None, records: bool = True):
    """Parse one JSON document and check every value (:func:`check_values`); any problem is an ImportProblem."""
    try:
        data = json_loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}" if record is None else f"column {exc.colno}"
        raise ImportProblem(display, f"malformed JSON at {where}: {exc.msg}", record=record) from exc
    except RecursionError as exc:
        # Thousands of nested brackets exhaust the parser's recursion before any depth check can see the result.
        deep_record, line = _too_deep_at(text, limits.max_depth)
        raise ImportProblem(
            display,
            f"nesting deeper than {limits.max_depth} levels (line {line})",
            record=record if record is not None or not records else deep_record,
        ) from exc
    check_values(data, limits, display, record=record, records=records, scan_chars=may_hold_refused_characters(text))
    return data


def may_hold_refused_characters(text: str) -> bool:
    """Whether strings parsed from ``text`` can hold a NUL or a lone surrogate (only if it has one, raw or as a
    \\u escape); when not, the checks skip scanning every string."""
    return _MAY_BE_REFUSED.search(text) is not None


def _too_deep_at(text: str, max_depth: int) -> tuple[int | None, int]:
    """Where nesting first exceeds ``max_depth``: the record (counted from 1; None unless the document is an
    array) and the line. Only called after the parser gave up, so its speed does not matter."""
    depth, commas, top_is_array = 0, 0, False
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            top_is_array = top_is_array or (depth == 1 and token == "[")
            if depth > max_depth:
                return (commas + 1 if top_is_array else None), text.count("\n", 0, match.start()) + 1
        elif token in "]}":
            depth -= 1
        elif token == "," and depth == 1:
            commas += 1
    return None, text.count("\n") + 1


def load_json(path: Path, limits: Limits, display: str):
    text = read_text(path, limits, display)
    if not text.strip():
        raise ImportProblem(display, "the file is empty")
    return parse_json(text, limits, display)


def _read_csv(path: Path, limits: Limits, display: str, required: tuple[str, ...]) -> list[dict]:
    reader = csv.DictReader(io.StringIO(read_text(path, limits, display), newline=""))
    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise ImportProblem(display, f"unreadable CSV header: {_csv_reason(exc)}") from exc
    for column, name in enumerate(header, start=1):
        reason = text_problem(name, limits)
        if reason:
            raise ImportProblem(display, f"column {column} of the CSV header {reason}")
    missing = [name for name in required if name not in header]
    if missing:
        raise ImportProblem(display, f"CSV header lacks column(s) {', '.join(missing)}", field=missing[0])
    records: list[dict] = []
    try:
        for row in reader:
            records.append(row)
            if len(records) > limits.max_records:
                break
    except csv.Error as exc:
        # The csv module stops at the record it cannot read (a cell over its field limit, a stray quote).
        raise ImportProblem(
            display, f"unreadable CSV at line {reader.line_num}: {_csv_reason(exc)}", record=len(records) + 1
        ) from exc
    for number, row in enumerate(records, start=1):
        if None in row:  # DictReader files the cells beyond the header under the key None
            raise ImportProblem(display, f"{len(row[None])} more cell(s) than the header has columns", record=number)
        check_values(row, limits, display, record=number)
    return records


def _csv_reason(exc: csv.Error) -> str:
    if "field limit" in str(exc):
        return f"a cell is longer than {csv.field_size_limit():,} characters"
    return str(exc)


def load_table(path: Path, limits: Limits, display: str, *, required: tuple[str, ...], key: str) -> list:
    """The records of a CSV file (header row naming ``required`` columns) or of a JSON array (also accepted wrapped
    as ``{key: [...]}``), within the record limit. Records are not checked beyond that: callers do it per field."""
    if path.suffix.lower() == ".csv":
        records = _read_csv(path, limits, display, required)
    else:
        records = load_json(path, limits, display)
        if isinstance(records, dict) and isinstance(records.get(key), list):
            records = records[key]
        if not isinstance(records, list):
            raise ImportProblem(display, f"expected a JSON array of {key}")
    if len(records) > limits.max_records:
        raise ImportProblem(display, f"{len(records):,} records; the limit is {limits.max_records:,}")
    return records


def keyed_records(records: list, display: str, *, required: tuple[str, ...], model, columns: dict[str, str]):
    """Yield ``(record number, record, key)`` for table records, numbered from 1: each must be an object whose
    ``required`` fields are non-empty text; ``key`` is the first of them, stripped, and must not repeat. Each
    field named in ``columns`` (record field → ``model`` field) must fit its column (:func:`require_fits`)."""
    seen: dict[str, int] = {}
    key_field = required[0]
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise ImportProblem(display, "must be an object", record=number)
        for name in required:
            value = record.get(name)
            if value is not None and not isinstance(value, str):
                raise ImportProblem(display, f"must be a string, not {json_type(value)}", record=number, field=name)
            if value is None or not value.strip():
                raise ImportProblem(display, "missing or empty", record=number, field=name)
        key = record[key_field].strip()
        for name, column in columns.items():
            if isinstance(record.get(name), str):
                require_fits(record[name].strip(), model, column, display, number, field=name)
        if key in seen:
            raise ImportProblem(
                display, f"duplicate {key_field} {key!r} (also record {seen[key]})", record=number, field=key_field
            )
        seen[key] = number
        yield number, record, key


def require_fits(value: str, model, column: str, display: str, record: int | None, *, field: str) -> str:
    """``value`` if it fits ``model.column`` (its ``max_length``, read from the model: never a copied number)."""
    max_length = model._meta.get_field(column).max_length
    if max_length is not None and len(value) > max_length:
        raise ImportProblem(
            display, f"is {len(value):,} characters long; the limit is {max_length:,}", record=record, field=field
        )
    return value


def require_str(record: dict, name: str, display: str, index: int, *, allow_empty: bool = False) -> str:
    if name not in record:
        raise ImportProblem(display, "missing", record=index, field=name)
    value = record[name]
    if not isinstance(value, str):
        raise ImportProblem(display, f"must be a string, not {json_type(value)}", record=index, field=name)
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


def identifier(value, display: str, record: int, *, field: str) -> str:
    """An id given as text or as a whole number, as text (ids are compared and stored as text). True/false is
    refused: it would be stored as "True". Text is kept as written (ids already stored were not stripped)."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None:
        raise ImportProblem(display, "missing", record=record, field=field)
    raise ImportProblem(display, f"must be a non-empty string or a whole number, not {shown(value)}",
                        record=record, field=field)  # fmt: skip


def shown(value) -> str:
    """A refused value for a message: short strings quoted, anything else by its JSON type."""
    if isinstance(value, str) and len(value) <= 40:
        return repr(value)
    return json_type(value)


def json_type(value) -> str:
    """The JSON name of a parsed value's type (people wrote JSON, not Python)."""
    for kind, name in ((bool, "true/false"), (str, "a string"), (int | float, "a number"), (list, "a list")):
        if isinstance(value, kind):
            return name
    return "an object" if isinstance(value, dict) else "null"
