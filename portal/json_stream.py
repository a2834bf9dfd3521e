"""Reading large files of records without loading them: JSON Lines line by line (:func:`iter_jsonl`) and a JSON
array record by record (:func:`iter_array_records`): one record at a time, with the same checks and
the same messages as :func:`portal.importing.load_json` on the whole file.

The file is read in blocks and decoded incrementally; each element of the top-level array is parsed on its own
(``JSONDecoder.raw_decode`` with the shared number hooks) and checked as a record (:func:`check_values`, with the
depth it has in the whole document). Memory therefore follows one block and one record, not the file: a ClinIQLink
file of 150,000 items is read in the space of a few hundred. A document that is not an array, and any malformed
JSON, is handed to the whole-file loader, so its message (line, column, record) is exactly the one it always was.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from pathlib import Path

from portal.importing import (
    ImportProblem,
    Limits,
    check_values,
    json_type,
    load_json,
    may_hold_refused_characters,
    parse_json,
    require_size,
)
from records.json_values import json_decoder
from records.text import NotUtf8, utf8_text

_BLOCK = 1 << 20  # characters read at a time; a record longer than this makes the buffer grow
_WHITESPACE = " \t\n\r"


class _Fallback(Exception):
    """The streamed reading cannot name the problem itself: the whole-file loader will."""


def iter_array_records(
    path: Path,
    limits: Limits,
    display: str,
    *,
    flatten: bool = False,
    expected: str = "a JSON array",
    on_read: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, object]]:
    """``(record number from 1, record)`` for each element of the top-level JSON array in ``path``; with
    ``flatten``, an element that is itself an array contributes its elements (one level, as ClinIQLink's own
    ``submit.py`` reads the files). Every record's values are checked (:func:`portal.importing.check_values`)
    before it is yielded; more than ``limits.max_records`` records is refused. A document that is not an array is
    refused as "expected ``expected``". ``on_read`` is told the bytes of each block read (progress)."""
    require_size(path, limits, display)
    number = 0
    try:
        for element, depth in _elements(_Text(path, on_read), flatten):
            number += 1
            if number > limits.max_records:
                raise ImportProblem(display, f"more than {limits.max_records:,} records; the limit is "
                                             f"{limits.max_records:,}")  # fmt: skip
            record, text = element
            # The record sits ``depth`` levels down in the document: its nesting is counted from there.
            scan_chars = may_hold_refused_characters(text)
            check_values(record, limits, display, record=number, scan_chars=scan_chars, depth=depth)
            yield number, record
    except _Fallback:
        pass
    else:
        return
    # Malformed, too deep, not UTF-8 or not an array: the whole-file loader names the place, as it always did.
    data = load_json(path, limits, display)
    if not isinstance(data, list):
        raise ImportProblem(display, f"expected {expected}, found a JSON {type(data).__name__}")
    raise ImportProblem(display, "malformed JSON")  # pragma: no cover - the loader refuses what the stream refused


def _elements(reader: _Text, flatten: bool) -> Iterator[tuple[tuple[object, str], int]]:
    """``((value, its JSON text), depth)`` for each element (each element of a nested array with ``flatten``)."""
    decoder = json_decoder()
    position = reader.next_char(0, expected="[")
    position = reader.next_char(position + 1)
    if reader.buffer[position] == "]":
        return _end(reader, position)
    while True:
        value, end = reader.decode(decoder, position)
        text = reader.buffer[position:end]
        if flatten and isinstance(value, list):
            # A group of records: their own texts are not cut out, the group's serves for the character scan.
            yield from (((record, text), 2) for record in value)
        else:
            yield (value, text), 1
        position = reader.next_char(end, expected=",]")
        if reader.buffer[position] == "]":
            return _end(reader, position)
        position = reader.release(reader.next_char(position + 1))


def _end(reader: _Text, position: int) -> None:
    if reader.skip_whitespace(position + 1) is not None:
        raise _Fallback  # "Extra data" after the array


class _Text:
    """The file's text from a moving start: ``buffer`` holds what is not yet consumed, read on demand."""

    def __init__(self, path: Path, on_read: Callable[[int], None] | None):
        self._file = path.open("rb")
        self._on_read = on_read
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.buffer = ""
        self.eof = False

    def _more(self, size: int = 0) -> bool:
        if self.eof:
            return False
        while True:
            block = self._file.read(size or _BLOCK)
            if self._on_read is not None:
                self._on_read(len(block))
            try:
                text = self._decoder.decode(block, final=not block)
            except UnicodeDecodeError as exc:
                raise _Fallback from exc
            if not block:
                self.eof = True
                self._file.close()
            self.buffer += text
            if text or self.eof:
                return bool(text)

    def next_char(self, position: int, expected: str = "") -> int:
        """Where the next character that is not whitespace is; the stream gives up at the end of the file or on a
        character other than ``expected`` (when given)."""
        found = self.skip_whitespace(position)
        if found is None or (expected and self.buffer[found] not in expected):
            raise _Fallback
        return found

    def skip_whitespace(self, position: int) -> int | None:
        """The position of the next character that is not whitespace, or None at the end of the file."""
        while True:
            while position < len(self.buffer) and self.buffer[position] in _WHITESPACE:
                position += 1
            if position < len(self.buffer):
                return position
            if not self._more():
                return None

    def decode(self, decoder: json.JSONDecoder, position: int) -> tuple[object, int]:
        """The JSON value starting at ``position`` and where it ends. A value cut by the end of the buffer (or one
        that ends exactly there, such as a number that may go on) is decoded again with more text."""
        grow = _BLOCK
        while True:
            try:
                value, end = decoder.raw_decode(self.buffer, position)
            except json.JSONDecodeError as exc:
                if not self._more(grow):
                    raise _Fallback from exc
                grow *= 2
                continue
            except RecursionError as exc:
                raise _Fallback from exc
            if end < len(self.buffer) or not self._more(grow):
                return value, end
            grow *= 2

    def release(self, position: int) -> int:
        """Forget the text before ``position`` once it is a block long (copying the rest for every record would
        cost more than the parsing); returns where ``position`` now is."""
        if position < _BLOCK:
            return position
        self.buffer = self.buffer[position:]
        return 0


def iter_jsonl(path: Path, limits: Limits, display: str, *, on_read: Callable[[int], None] | None = None):
    """``(record number, object)`` for each non-blank line of a JSONL file, numbered from 1, with the shared
    checks: record limit, well-formed JSON with acceptable values (:func:`parse_json`), each line an object. The file
    is read line by line (a file of a million records is never held whole)."""
    require_size(path, limits, display)
    number = 0
    # Binary lines end at b"\n" only: str.splitlines() would also split on U+2028, U+0085 and others, which JSON
    # strings may hold unescaped (json.dumps(..., ensure_ascii=False) writes them so), cutting a record in two.
    with path.open("rb") as lines:
        for index, raw in enumerate(lines):
            if on_read is not None:
                on_read(len(raw))
            try:
                line = utf8_text(raw, byte_order_mark=index == 0)
            except NotUtf8 as exc:
                raise ImportProblem(display, f"line {index + 1}: {exc}") from None
            if not line.strip():
                continue
            number += 1
            if number > limits.max_records:
                raise ImportProblem(display, f"more than {limits.max_records:,} records")
            record = parse_json(line, limits, display, record=number)
            if not isinstance(record, dict):
                raise ImportProblem(display, f"must be a JSON object, not {json_type(record)}", record=number)
            yield number, record
