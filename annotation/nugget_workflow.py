"""The nugget workflow's rules: version states and moves, who may do what, and the checks on a nugget list.
Pure: no database access here (the services in ``annotation/services/nuggets*.py`` apply these rules).

Versions and their states
-------------------------
An item's nugget list is versioned (``annotation.models.NuggetSet``); a version is never edited, a change is a new
version. States:

- ``draft``: written by an expert (origin ``authored``) or imported from a file (origin ``imported``); waits for a
  second expert to validate it.
- ``disputed``: the validator changed the draft (edit, merge, split, drop, add, re-rate): their list is a new
  version (origin ``validation``) and both versions wait for an adjudicator.
- ``validated``: the version studies and releases use; at most one per item. It comes from a validator accepting a
  draft as it is, or from an adjudicator picking one of the two disputed versions or writing a final one (origin
  ``adjudication``).
- ``superseded``: replaced: the old validated version once a newer one is validated, the version the adjudicator
  did not pick, a draft replaced by a newer import.

Who may do what
---------------
- write and validate: the medical experts (roles reviewer, adjudicator or ranker); nobody validates a version they
  wrote or imported;
- adjudicate: adjudicators who took no part in the disagreement (did not write, import or validate either version):
  the conflict-of-interest rule of vetting (``annotation.selectors.review``), applied to nugget work;
- import and export: organizers, for any item.

Which items need nuggets
------------------------
Verified items whose reference answer is free text: short answer, multi-hop and their inverse forms, and other
benchmarks' generic items (PromptCBLUE). True/false, multiple choice and list items are scored exactly and need no
nuggets (an organizer may still import nuggets for them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.db import models

from annotation.qa_types import QAType
from metrics.nuggets import IMPORTANCES, Nugget
from portal.roles import Role

# --- states and moves -------------------------------------------------------------------------------------------


class SetStatus(models.TextChoices):
    """The states of a version (``NuggetSet.Status`` is this class)."""

    DRAFT = "draft", "Draft: waiting for validation"
    DISPUTED = "disputed", "Disputed: waiting for an adjudicator"
    VALIDATED = "validated", "Validated"
    SUPERSEDED = "superseded", "Superseded by a later version"


class NuggetAction(models.TextChoices):
    ACCEPT = "accept", "Validator accepted the draft"
    CHANGE = "change", "Validator changed the draft (both versions go to an adjudicator)"
    PICK = "pick", "Adjudicator picked this version"
    SET_ASIDE = "set_aside", "Adjudicator picked the other version or wrote a final one"
    SUPERSEDE = "supersede", "A newer version replaced it"


S, NA = SetStatus, NuggetAction

NUGGET_TRANSITIONS: dict[tuple[str, str], str] = {
    (S.DRAFT, NA.ACCEPT): S.VALIDATED,
    (S.DRAFT, NA.CHANGE): S.DISPUTED,
    (S.DISPUTED, NA.PICK): S.VALIDATED,
    (S.DISPUTED, NA.SET_ASIDE): S.SUPERSEDED,
    (S.VALIDATED, NA.SUPERSEDE): S.SUPERSEDED,
    # A draft nobody has validated yet, replaced by a newer import of the same item.
    (S.DRAFT, NA.SUPERSEDE): S.SUPERSEDED,
}

#: The states of versions still being worked on (an item has at most one such round at a time).
OPEN_STATES = frozenset({S.DRAFT, S.DISPUTED})


class IllegalNuggetMove(Exception):
    """A move the table does not allow; services turn it into a ``Conflict``."""


def nugget_next_status(current: str, action: str) -> str:
    """The state of a version after ``action``; raises :class:`IllegalNuggetMove` if the move is not allowed."""
    try:
        return NUGGET_TRANSITIONS[(SetStatus(current), NuggetAction(action))]
    except (KeyError, ValueError):
        raise IllegalNuggetMove(f"cannot {action!r} a nugget version that is {current!r}") from None


# --- which items -----------------------------------------------------------------------------------------------

#: Item types whose reference answer is free text, so that nuggets say what a good answer must contain.
NUGGET_QA_TYPES = (
    QAType.SHORT.value,
    QAType.SHORT_INVERSE.value,
    QAType.MULTI_HOP.value,
    QAType.MULTI_HOP_INVERSE.value,
    QAType.GENERIC.value,
)


def item_needs_nuggets(*, qa_type: str, item_status: str) -> bool:
    """Whether the writing queue offers the item: verified and of a free-text type."""
    return item_status == "verified" and qa_type in NUGGET_QA_TYPES


# --- who may do what -------------------------------------------------------------------------------------------

#: The medical experts: they write and validate nuggets.
NUGGET_EXPERT_ROLES = frozenset({Role.REVIEWER.value, Role.ADJUDICATOR.value, Role.RANKER.value})

NOT_AN_EXPERT = "Only the medical experts (reviewers, adjudicators and physicians) write and validate nuggets."
OWN_VERSION = "You wrote or imported this version of the nuggets, so someone else validates it."
NOT_AN_ADJUDICATOR = "Only adjudicators settle nugget disagreements."
NUGGET_CONFLICT_OF_INTEREST = (
    "You wrote, imported or validated one of the two versions of item {uid}'s nuggets, so you may not settle the "
    "disagreement: an adjudicator who took no part in it will."
)


def may_write_nuggets(roles: Iterable[str]) -> bool:
    return bool(NUGGET_EXPERT_ROLES & set(roles))


def may_validate_nuggets(roles: Iterable[str], *, person_id: int, author_id: int | None) -> bool:
    """Experts validate versions someone else wrote or imported."""
    return may_write_nuggets(roles) and person_id != author_id


def may_adjudicate_nuggets(roles: Iterable[str]) -> bool:
    return Role.ADJUDICATOR.value in set(roles)


def nugget_conflict_of_interest(*, person_id: int, participant_ids: Iterable[int | None]) -> bool:
    """Vetting's conflict-of-interest rule for nuggets: whoever wrote, imported or validated a version of the
    disagreement has judged it, and does not settle it."""
    return person_id in set(participant_ids)


def may_import_nuggets(roles: Iterable[str]) -> bool:
    return Role.ORGANIZER.value in set(roles)


# --- the checks on a list --------------------------------------------------------------------------------------

MIN_NUGGETS, MAX_NUGGETS = 1, 30
MAX_TEXT = 2_000
MAX_KEY = 50
_KEY = re.compile(r"^[A-Za-z0-9_.:-]+$")


@dataclass(frozen=True)
class NuggetListProblem:
    """One problem of a nugget list. ``entry``: 1-based position of the nugget (None: the list as a whole)."""

    detail: str
    entry: int | None = None
    field: str = ""

    def __str__(self) -> str:
        if self.entry is None:
            return self.detail
        return f"nugget {self.entry}: {self.detail}"


class NuggetListError(ValueError):
    """A nugget list that breaks the rules; ``problems`` lists every one (pages show them all at once)."""

    def __init__(self, problems: list[NuggetListProblem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def _text_key(text: str) -> str:
    """Two texts are the same nugget when they differ only in case, spacing or Unicode form."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _next_key(used: set[str]) -> str:
    number = 1
    while f"n{number}" in used:
        number += 1
    return f"n{number}"


def nugget_list_clean(entries: Iterable[Mapping[str, object]]) -> list[Nugget]:
    """Check a list of ``{"id", "text", "importance"}`` mappings and return it as :class:`Nugget` s in order.

    Texts are trimmed (inner whitespace runs become one space, so a pasted line break does not make a second
    fact); a nugget with no ``id`` gets the first free ``n1``, ``n2``, … Rules: 1–30 nuggets; a text of 1–2,000
    characters; no two nuggets with the same text; at least one ``vital``; ids unique, at most 50 letters, digits or
    ``_ . : -``. Raises :class:`NuggetListError` naming every problem.
    """
    entries = list(entries)
    problems: list[NuggetListProblem] = []
    if len(entries) < MIN_NUGGETS:
        problems.append(NuggetListProblem("give at least one nugget"))
    if len(entries) > MAX_NUGGETS:
        problems.append(NuggetListProblem(f"{len(entries)} nuggets; at most {MAX_NUGGETS} per item"))
    texts: dict[str, int] = {}
    keys: dict[str, int] = {}
    cleaned: list[tuple[str, str, str]] = []
    for position, entry in enumerate(entries, start=1):
        raw_text = entry.get("text")
        text = " ".join(raw_text.split()) if isinstance(raw_text, str) else ""
        if not text:
            problems.append(NuggetListProblem("the text is empty", position, "text"))
        elif len(text) > MAX_TEXT:
            problems.append(
                NuggetListProblem(f"the text has {len(text):,} characters; at most {MAX_TEXT:,}", position, "text")
            )
        elif _text_key(text) in texts:
            problems.append(NuggetListProblem(f"the same text as nugget {texts[_text_key(text)]}", position, "text"))
        else:
            texts[_text_key(text)] = position
        importance = entry.get("importance")
        if importance not in IMPORTANCES:
            problems.append(
                NuggetListProblem(f"the importance must be one of {', '.join(IMPORTANCES)}", position, "importance")
            )
        raw_key = entry.get("id")
        key = raw_key.strip() if isinstance(raw_key, str) else ""
        if key:
            if len(key) > MAX_KEY or not _KEY.match(key):
                problems.append(
                    NuggetListProblem(f"the id must be 1–{MAX_KEY} letters, digits or _ . : -", position, "id")
                )
            elif key in keys:
                problems.append(NuggetListProblem(f"the id {key!r} is used by nugget {keys[key]}", position, "id"))
            else:
                keys[key] = position
        cleaned.append((key, text, str(importance)))
    if entries and not any(entry.get("importance") == "vital" for entry in entries):
        problems.append(NuggetListProblem("mark at least one nugget vital: what a good answer must say"))
    if problems:
        raise NuggetListError(problems)
    used = set(keys)
    result = []
    for key, text, importance in cleaned:
        if not key:
            key = _next_key(used)
            used.add(key)
        result.append(Nugget(key, text, importance))
    return result


def nugget_lists_equal(first: Iterable[Nugget], second: Iterable[Nugget]) -> bool:
    """Whether two lists say the same: same texts, importances and order (ids aside: renumbering is no change)."""
    return [(n.text, n.importance) for n in first] == [(n.text, n.importance) for n in second]
