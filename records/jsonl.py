"""Strict reading of JSON Lines input files (pure): every problem named by file, line (from 1) and field.

One object per line; blank lines are skipped but counted. Refused before anything is used: a file over
:data:`MAX_FILE_BYTES`, a line over :data:`MAX_LINE_BYTES`, text that is not UTF-8, not JSON, not an object,
nesting deeper than :data:`MAX_DEPTH` (checked before parsing, so thousands of brackets cannot exhaust the stack),
anywhere in a line what the one JSON parser refuses (:mod:`records.json_values`: ``NaN`` / ``Infinity``, a number
too large for a float such as ``1e400``, integers of more than 15 digits, a key given twice), and in text fields
NUL characters, lone surrogates and overlong values. Used by every reader of a user's JSONL file (nuggets, judge
labels and scores, hallucination spans), so the rules are the same everywhere.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from records.json_values import json_loads, place, refused_value
from records.text import NotUtf8, refused_character, utf8_text

MAX_LINE_BYTES = 1_000_000
MAX_DEPTH = 20
MAX_FILE_BYTES = 200 * 1024 * 1024

Source = str | os.PathLike | Iterable[str] | Iterable[bytes]


class InputFileError(ValueError):
    """Bad input; the message names the file, the line (from 1) and the field.

    ``file``, ``line``, ``field`` and ``detail`` are kept apart for pages that show them in a table.
    """

    def __init__(self, file: str, detail: str, *, line: int | None = None, field: str | None = None) -> None:
        self.file, self.line, self.field, self.detail = file, line, field, detail
        where = [file]
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {detail}")


def display_name(source: Source, name: str | None) -> str:
    """How a source is called in messages: ``name``, else the path, else "input"."""
    if name:
        return name
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return "input"


def _raw_lines(source: Source, display: str) -> Iterator[str | bytes]:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                raise InputFileError(display, f"the file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
            data = path.read_bytes()
        except OSError as exc:
            raise InputFileError(display, f"cannot be read: {exc.strerror or exc}") from exc
        # Split on newlines only: splitlines() would also cut at U+2028 and kin, which JSON strings may hold raw.
        yield from data.split(b"\n")
    else:
        yield from source


def lines(source: Source, display: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each non-blank line, numbered from 1 counting blank lines too."""
    for number, raw in enumerate(_raw_lines(source, display), start=1):
        if len(raw) > MAX_LINE_BYTES:
            raise InputFileError(display, f"the line is over {MAX_LINE_BYTES:,} bytes", line=number)
        if isinstance(raw, bytes):
            try:
                raw = utf8_text(raw, byte_order_mark=number == 1)
            except NotUtf8 as exc:
                raise InputFileError(display, str(exc), line=number) from None
        elif number == 1:
            raw = raw.removeprefix("\ufeff")
        if len(raw.encode("utf-8", "surrogatepass")) > MAX_LINE_BYTES:
            raise InputFileError(display, f"the line is over {MAX_LINE_BYTES:,} bytes", line=number)
        if raw.strip():
            yield number, raw


_CONTAINER_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _too_deep(text: str) -> bool:
    """Whether brackets outside strings nest deeper than MAX_DEPTH (checked before parsing: json.loads would
    raise RecursionError on thousands of them)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    depth = 0
    for match in _CONTAINER_TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif token in "]}":
            depth -= 1
    return False


def parse_line(text: str, display: str, number: int) -> dict:
    if _too_deep(text):
        raise InputFileError(display, f"nesting deeper than {MAX_DEPTH} levels", line=number)
    try:
        record = json_loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(display, f"not valid JSON (column {exc.colno}: {exc.msg})", line=number) from exc
    except RecursionError as exc:  # pragma: no cover - _too_deep catches it first
        raise InputFileError(display, f"nesting deeper than {MAX_DEPTH} levels", line=number) from exc
    if not isinstance(record, dict):
        raise InputFileError(display, f"must be a JSON object, not {json_type(record)}", line=number)
    # Anywhere in the line, read by the reader or not: a repeated key or an infinite number is never what was meant.
    found = refused_value(record)
    if found is not None:
        path, reason = found
        raise InputFileError(display, reason, line=number, field=place(path))
    return record


def json_type(value) -> str:
    """The JSON name of a parsed value's type (people wrote JSON, not Python)."""
    for kind, name in ((bool, "true/false"), (str, "a string"), (int | float, "a number"), (list, "a list")):
        if isinstance(value, kind):
            return name
    return "an object" if isinstance(value, dict) else "null"


def text_field(
    record: dict,
    key: str,
    display: str,
    number: int,
    *,
    limit: int,
    field: str | None = None,
    allow_empty: bool = False,
    strip: bool = True,
) -> str:
    """A required string field: present, a string, not blank (unless allowed), within ``limit`` characters, without
    NUL or lone surrogates; stripped unless ``strip`` is false (a text that offsets point into must stay exact)."""
    field = field or key
    if key not in record:
        raise InputFileError(display, "is missing", line=number, field=field)
    value = record[key]
    if not isinstance(value, str):
        raise InputFileError(display, f"must be a string, not {json_type(value)}", line=number, field=field)
    if why := refused_character(value):
        raise InputFileError(display, why, line=number, field=field)
    if strip:
        value = value.strip()
    if not value.strip() and not allow_empty:
        raise InputFileError(display, "is empty", line=number, field=field)
    if len(value) > limit:
        raise InputFileError(
            display, f"is {len(value):,} characters long; the limit is {limit:,}", line=number, field=field
        )
    return value


def choice_field(
    record: dict, key: str, choices: tuple[str, ...], display: str, number: int, field: str | None = None
) -> str:
    """A required string field that must be one of ``choices``."""
    value = text_field(record, key, display, number, limit=50, field=field)
    if value not in choices:
        raise InputFileError(display, f"{value!r} is not one of {', '.join(choices)}", line=number, field=field or key)
    return value


def records(source: Source, display: str) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line."""
    for number, text in lines(source, display):
        yield number, parse_line(text, display, number)


def number_field(record: dict, key: str, display: str, number: int, *, field: str | None = None) -> float:
    """A required number (a JSON number; ``true``/``false`` and strings refused). It is finite: a line holding NaN,
    an infinite or a huge number is refused by :func:`parse_line` before any field is read."""
    field = field or key
    if key not in record:
        raise InputFileError(display, "is missing", line=number, field=field)
    value = record[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputFileError(display, f"must be a number, not {json_type(value)}", line=number, field=field)
    return float(value)
