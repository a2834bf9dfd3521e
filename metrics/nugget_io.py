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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from records.json_values import MAX_INT_DIGITS
from records.jsonl import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_LINE_BYTES,
    InputFileError,
    Source,
    display_name,
    json_type,
    lines,
    parse_line,
    text_field,
)
from records.jsonl import choice_field as _choice

from .nuggets import IMPORTANCES, LABELS, Nugget

MAX_UID = 100
MAX_NUGGET_ID = 50
MAX_NUGGET_TEXT = 2_000
MAX_NAME = 100
MAX_RESPONSE = 100_000
MAX_NUGGETS_PER_ITEM = 200

#: The nugget readers' error: the shared input-file error (file, line, field), under the name callers know.
NuggetInputError = InputFileError

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_INT_DIGITS",
    "MAX_LINE_BYTES",
    "Answer",
    "Label",
    "NuggetInputError",
    "Source",
    "read_answers_jsonl",
    "read_labels_jsonl",
    "read_nuggets_jsonl",
]


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


# ------------------------------------------------------------------------------------------ the readers


def read_nuggets_jsonl(
    source: Source, *, name: str | None = None, line_numbers: dict[str, int] | None = None
) -> dict[str, list[Nugget]]:
    """item_uid → its nuggets in file order. ``source``: a path, or an iterable of lines (str or bytes, e.g. an
    uploaded file). ``name``: how the file is called in messages (default: the path). Keys other than those of
    the format are ignored (tools that draft nuggets may add their own). ``line_numbers``: a dict to fill with
    item_uid → its line (for callers whose own checks name the line)."""
    display = display_name(source, name)
    items: dict[str, list[Nugget]] = {}
    first_line: dict[str, int] = {} if line_numbers is None else line_numbers
    for number, text in lines(source, display):
        record = parse_line(text, display, number)
        uid = text_field(record, "item_uid", display, number, limit=MAX_UID)
        if uid in items:
            raise NuggetInputError(
                display, f"item {uid!r} is already given on line {first_line[uid]}", line=number, field="item_uid"
            )
        entries = record.get("nuggets")
        if "nuggets" not in record:
            raise NuggetInputError(display, "is missing", line=number, field="nuggets")
        if not isinstance(entries, list):
            raise NuggetInputError(display, f"must be a list, not {json_type(entries)}", line=number, field="nuggets")
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
                raise NuggetInputError(display, f"must be an object, not {json_type(entry)}", line=number, field=where)
            nugget_id = text_field(entry, "id", display, number, limit=MAX_NUGGET_ID, field=f"{where}.id")
            if nugget_id in seen:
                raise NuggetInputError(
                    display, f"nugget id {nugget_id!r} is used twice in this item", line=number, field=f"{where}.id"
                )
            seen.add(nugget_id)
            nugget_text = text_field(entry, "text", display, number, limit=MAX_NUGGET_TEXT, field=f"{where}.text")
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
    display = display_name(source, name)
    answers: list[Answer] = []
    first_line: dict[tuple[str, str], int] = {}
    for number, text in lines(source, display):
        record = parse_line(text, display, number)
        uid = text_field(record, "item_uid", display, number, limit=MAX_UID)
        system = text_field(record, "system", display, number, limit=MAX_NAME)
        response = text_field(record, "response", display, number, limit=MAX_RESPONSE, allow_empty=True)
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
    display = display_name(source, name)
    answered = {(a.item_uid, a.system) for a in answers} if answers is not None else None
    ids = {uid: {n.id for n in items} for uid, items in nuggets.items()} if nuggets is not None else None
    labels: list = []
    first_line: dict[tuple[str, str, str, str], int] = {}
    for number, text in lines(source, display):
        record = parse_line(text, display, number)
        uid = text_field(record, "item_uid", display, number, limit=MAX_UID)
        system = text_field(record, "system", display, number, limit=MAX_NAME)
        nugget_id = text_field(record, "nugget_id", display, number, limit=MAX_NUGGET_ID)
        label = _choice(record, "label", LABELS, display, number)
        who = "judge" if "labeller" not in record and "judge" in record else "labeller"
        labeller = text_field(record, who, display, number, limit=MAX_NAME)
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
