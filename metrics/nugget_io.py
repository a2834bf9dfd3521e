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

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .nuggets import Nugget

MAX_UID = 100
MAX_NUGGET_ID = 50
MAX_NUGGET_TEXT = 2_000
MAX_NAME = 100
MAX_RESPONSE = 100_000
MAX_LINE_BYTES = 1_000_000
MAX_DEPTH = 20
MAX_NUGGETS_PER_ITEM = 200

Source = str | os.PathLike | Iterable[str] | Iterable[bytes]


class NuggetInputError(ValueError):
    """Bad nugget / answer / label input; the message names the file, the line (from 1) and the field."""


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


def read_nuggets_jsonl(source: Source, *, name: str | None = None) -> dict[str, list[Nugget]]:
    """item_uid → its nuggets in file order. ``name``: how the file is called in messages (default: the path)."""
    raise NotImplementedError


def read_answers_jsonl(
    source: Source,
    *,
    name: str | None = None,
    nuggets: Mapping[str, list[Nugget]] | None = None,
) -> list[Answer]:
    """The answers in file order; one per (item_uid, system). With ``nuggets``, an unknown item is refused."""
    raise NotImplementedError


def read_labels_jsonl(
    source: Source,
    *,
    name: str | None = None,
    nuggets: Mapping[str, list[Nugget]] | None = None,
    answers: Iterable[Answer] | None = None,
) -> list[Label]:
    """The labels in file order; one per (item_uid, system, nugget_id, labeller). With ``nuggets`` / ``answers``,
    a label for an unknown item, nugget or (item, system) answer is refused."""
    raise NotImplementedError
