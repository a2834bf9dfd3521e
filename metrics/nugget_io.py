"""Readers of the nugget JSONL formats (docs/nuggets.md "Formats"), pure and strict.

One object per line; blank lines are skipped; lines count from 1. Every problem raises
:class:`NuggetInputError` naming the file, the line and the field, before anything is used: not JSON, not an
object, a missing / empty / wrong-typed field, an unknown importance or label, a duplicate nugget id in an item, a
duplicate item line, a label for an unknown item / nugget / system, NUL bytes, overlong strings, a line over
:data:`MAX_LINE_BYTES`, nesting deeper than :data:`MAX_DEPTH`. The portal's import pages call these readers too.

* nuggets: ``{"item_uid": "...", "nuggets": [{"id": "n1", "text": "...", "importance": "vital"}]}``
* answers: ``{"item_uid": "...", "system": "...", "response": "..."}``
* labels: ``{"item_uid", "system", "nugget_id", "label", "labeller"}`` (``judge`` accepted for ``labeller``)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .nuggets import IMPORTANCES, LABELS, Nugget

MAX_UID = 100
MAX_NUGGET_ID = 50
MAX_NUGGET_TEXT = 2_000
MAX_NAME = 100
MAX_RESPONSE = 100_000
MAX_LINE_BYTES = 1_000_000
MAX_DEPTH = 20
MAX_NUGGETS_PER_ITEM = 200
MAX_FILE_BYTES = 200 * 1024 * 1024
#: Longest integer literal accepted (none of the formats has a number field; this only keeps ``int()`` cheap).
MAX_INT_DIGITS = 15

Source = str | os.PathLike | Iterable[str] | Iterable[bytes]


class NuggetInputError(ValueError):
    """Bad nugget / answer / label input; the message names the file, the line (from 1) and the field.

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


@dataclass(frozen=True)
class Answer:
    """One system's answer to one item."""

    item_uid: str
    system: str
    response: str


@dataclass(frozen=True)
class Label:
    """One labeller's label of one nugget in one system's answer to one item."""

    item_uid: str
    system: str
    nugget_id: str
    label: str
    labeller: str


# ------------------------------------------------------------------------------------------ lines and JSON


def _display(source: Source, name: str | None) -> str:
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
                raise NuggetInputError(display, f"the file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
            data = path.read_bytes()
        except OSError as exc:
            raise NuggetInputError(display, f"cannot be read: {exc.strerror or exc}") from exc
        # Split on newlines only: splitlines() would also cut at U+2028 and kin, which JSON strings may hold raw.
        yield from data.split(b"\n")
    else:
        yield from source


def _lines(source: Source, display: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each non-blank line, numbered from 1 counting blank lines too."""
    for number, raw in enumerate(_raw_lines(source, display), start=1):
        if len(raw) > MAX_LINE_BYTES:
            raise NuggetInputError(display, f"the line is over {MAX_LINE_BYTES:,} bytes", line=number)
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise NuggetInputError(display, f"not UTF-8 text (byte {exc.start + 1})", line=number) from exc
        elif number == 1:
            raw = raw.removeprefix("\ufeff")
        if len(raw.encode("utf-8", "surrogatepass")) > MAX_LINE_BYTES:
            raise NuggetInputError(display, f"the line is over {MAX_LINE_BYTES:,} bytes", line=number)
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


class _Refused(str):
    """A number literal refused while parsing (kept as text so the field can be named)."""


def _parse_int(text: str):
    return _Refused(f"an integer of {len(text)} digits") if len(text.lstrip("-")) > MAX_INT_DIGITS else int(text)


def _parse_constant(name: str):
    return _Refused(f"{name} is not a number")


def _parse_line(text: str, display: str, number: int) -> dict:
    if _too_deep(text):
        raise NuggetInputError(display, f"nesting deeper than {MAX_DEPTH} levels", line=number)
    try:
        record = json.loads(text, parse_int=_parse_int, parse_constant=_parse_constant)
    except json.JSONDecodeError as exc:
        raise NuggetInputError(display, f"not valid JSON (column {exc.colno}: {exc.msg})", line=number) from exc
    except RecursionError as exc:  # pragma: no cover - _too_deep catches it first
        raise NuggetInputError(display, f"nesting deeper than {MAX_DEPTH} levels", line=number) from exc
    if not isinstance(record, dict):
        raise NuggetInputError(display, f"must be a JSON object, not {_json_type(record)}", line=number)
    return record


def _json_type(value) -> str:
    for kind, name in ((bool, "true/false"), (str, "a string"), (int | float, "a number"), (list, "a list")):
        if isinstance(value, kind) and not isinstance(value, _Refused):
            return name
    if isinstance(value, _Refused):
        return "a number"
    return "an object" if isinstance(value, dict) else "null"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(
    record: dict, key: str, display: str, number: int, *, limit: int, field: str | None = None, allow_empty=False
) -> str:
    """A required string field, stripped: present, a string, not empty (unless allowed), within ``limit``
    characters, without NUL or lone surrogates."""
    field = field or key
    if key not in record:
        raise NuggetInputError(display, "is missing", line=number, field=field)
    value = record[key]
    if not isinstance(value, str) or isinstance(value, _Refused):
        raise NuggetInputError(display, f"must be a string, not {_json_type(value)}", line=number, field=field)
    if "\x00" in value:
        raise NuggetInputError(display, "contains a NUL character", line=number, field=field)
    if _SURROGATE.search(value):
        raise NuggetInputError(display, "contains a lone surrogate (broken UTF-16)", line=number, field=field)
    value = value.strip()
    if not value and not allow_empty:
        raise NuggetInputError(display, "is empty", line=number, field=field)
    if len(value) > limit:
        raise NuggetInputError(
            display, f"is {len(value):,} characters long; the limit is {limit:,}", line=number, field=field
        )
    return value


def _choice(record: dict, key: str, choices: tuple[str, ...], display: str, number: int, field: str | None = None):
    value = _text(record, key, display, number, limit=50, field=field)
    if value not in choices:
        raise NuggetInputError(
            display, f"{value!r} is not one of {', '.join(choices)}", line=number, field=field or key
        )
    return value


# ------------------------------------------------------------------------------------------ the readers


def read_nuggets_jsonl(
    source: Source, *, name: str | None = None, line_numbers: dict[str, int] | None = None
) -> dict[str, list[Nugget]]:
    """item_uid → its nuggets in file order. ``source``: a path, or an iterable of lines (str or bytes, e.g. an
    uploaded file). ``name``: how the file is called in messages (default: the path). Keys other than those of
    the format are ignored (tools that draft nuggets may add their own). ``line_numbers``: a dict to fill with
    item_uid → its line (for callers whose own checks name the line)."""
    display = _display(source, name)
    items: dict[str, list[Nugget]] = {}
    first_line: dict[str, int] = {} if line_numbers is None else line_numbers
    for number, text in _lines(source, display):
        record = _parse_line(text, display, number)
        uid = _text(record, "item_uid", display, number, limit=MAX_UID)
        if uid in items:
            raise NuggetInputError(
                display, f"item {uid!r} is already given on line {first_line[uid]}", line=number, field="item_uid"
            )
        entries = record.get("nuggets")
        if "nuggets" not in record:
            raise NuggetInputError(display, "is missing", line=number, field="nuggets")
        if not isinstance(entries, list):
            raise NuggetInputError(display, f"must be a list, not {_json_type(entries)}", line=number, field="nuggets")
        if not entries:
            raise NuggetInputError(display, "must list at least one nugget", line=number, field="nuggets")
        if len(entries) > MAX_NUGGETS_PER_ITEM:
            raise NuggetInputError(
                display, f"{len(entries)} nuggets; at most {MAX_NUGGETS_PER_ITEM}", line=number, field="nuggets"
            )
        nuggets: list[Nugget] = []
        seen: set[str] = set()
        for index, entry in enumerate(entries, start=1):
            where = f"nuggets (entry {index})"
            if not isinstance(entry, dict):
                raise NuggetInputError(display, f"must be an object, not {_json_type(entry)}", line=number, field=where)
            nugget_id = _text(entry, "id", display, number, limit=MAX_NUGGET_ID, field=f"{where}.id")
            if nugget_id in seen:
                raise NuggetInputError(
                    display, f"nugget id {nugget_id!r} is used twice in this item", line=number, field=f"{where}.id"
                )
            seen.add(nugget_id)
            nugget_text = _text(entry, "text", display, number, limit=MAX_NUGGET_TEXT, field=f"{where}.text")
            importance = _choice(entry, "importance", IMPORTANCES, display, number, field=f"{where}.importance")
            nuggets.append(Nugget(nugget_id, nugget_text, importance))
        items[uid] = nuggets
        first_line[uid] = number
    return items


def read_answers_jsonl(
    source: Source,
    *,
    name: str | None = None,
    nuggets: Mapping[str, list[Nugget]] | None = None,
) -> list[Answer]:
    """The answers in file order; one per (item_uid, system); an empty response is an answer (it supports
    nothing). With ``nuggets``, an answer to an item that has none is refused."""
    display = _display(source, name)
    answers: list[Answer] = []
    first_line: dict[tuple[str, str], int] = {}
    for number, text in _lines(source, display):
        record = _parse_line(text, display, number)
        uid = _text(record, "item_uid", display, number, limit=MAX_UID)
        system = _text(record, "system", display, number, limit=MAX_NAME)
        response = _text(record, "response", display, number, limit=MAX_RESPONSE, allow_empty=True)
        if nuggets is not None and uid not in nuggets:
            raise NuggetInputError(display, f"item {uid!r} has no nuggets", line=number, field="item_uid")
        if (uid, system) in first_line:
            raise NuggetInputError(
                display,
                f"system {system!r} already answered item {uid!r} on line {first_line[uid, system]}",
                line=number,
                field="system",
            )
        first_line[uid, system] = number
        answers.append(Answer(uid, system, response))
    return answers


def read_labels_jsonl(
    source: Source,
    *,
    name: str | None = None,
    nuggets: Mapping[str, list[Nugget]] | None = None,
    answers: Iterable[Answer] | None = None,
    with_lines: bool = False,
) -> list[Label] | list[tuple[int, Label]]:
    """The labels in file order; one per (item_uid, system, nugget_id, labeller). The labeller may be given as
    ``labeller`` or (external judges' files) ``judge``. With ``nuggets`` / ``answers``, a label for an unknown
    item, nugget or answer (item, system) is refused. ``with_lines``: ``(line number, label)`` pairs, for
    callers that check across several files."""
    display = _display(source, name)
    answered = {(a.item_uid, a.system) for a in answers} if answers is not None else None
    ids = {uid: {n.id for n in items} for uid, items in nuggets.items()} if nuggets is not None else None
    labels: list = []
    first_line: dict[tuple[str, str, str, str], int] = {}
    for number, text in _lines(source, display):
        record = _parse_line(text, display, number)
        uid = _text(record, "item_uid", display, number, limit=MAX_UID)
        system = _text(record, "system", display, number, limit=MAX_NAME)
        nugget_id = _text(record, "nugget_id", display, number, limit=MAX_NUGGET_ID)
        label = _choice(record, "label", LABELS, display, number)
        who = "judge" if "labeller" not in record and "judge" in record else "labeller"
        labeller = _text(record, who, display, number, limit=MAX_NAME)
        if ids is not None and uid not in ids:
            raise NuggetInputError(display, f"item {uid!r} has no nuggets", line=number, field="item_uid")
        if ids is not None and nugget_id not in ids[uid]:
            raise NuggetInputError(display, f"item {uid!r} has no nugget {nugget_id!r}", line=number, field="nugget_id")
        if answered is not None and (uid, system) not in answered:
            raise NuggetInputError(
                display, f"there is no answer from system {system!r} to item {uid!r}", line=number, field="system"
            )
        key = (uid, system, nugget_id, labeller)
        if key in first_line:
            raise NuggetInputError(
                display,
                f"{labeller!r} already labelled nugget {nugget_id!r} of {system!r} on item {uid!r} "
                f"on line {first_line[key]}",
                line=number,
                field=who,
            )
        first_line[key] = number
        found = Label(uid, system, nugget_id, label, labeller)
        labels.append((number, found) if with_lines else found)
    return labels
