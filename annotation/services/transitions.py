"""The one place an item's status changes: lock, check the move against the table, write, audit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from annotation.models import QAItem
from annotation.workflow import Action, IllegalTransition, ItemStatus, Route, next_status
from portal.audit import audit_record
from portal.bulk import columns_sql, from_row, row_fields, update_row
from portal.errors import Conflict
from portal.models import User

_FINAL_FIELDS = ("final_verdict", "final_relevance", "final_source")


LOCK_FIELDS = ("pk", "uid", "qa_type", "status", "held_from", *_FINAL_FIELDS)
_LOCK_COLUMNS = row_fields(QAItem, only=LOCK_FIELDS)


def item_lock_sql(item_id: str = "%s", *, nowait: bool = False) -> str:
    """The statement :func:`item_lock` runs, for the item whose id is the SQL expression ``item_id`` (a parameter by
    default), to send along with other statements; read its row with :func:`item_from_lock_row`."""
    return _lock_sql(item_id, nowait)


@cache
def _lock_sql(item_id: str, nowait: bool) -> str:
    columns = columns_sql(_LOCK_COLUMNS)
    wait = " NOWAIT" if nowait else ""
    return f"SELECT {columns} FROM {QAItem._meta.db_table} WHERE id = {item_id} FOR UPDATE{wait}"


def item_from_lock_row(row: Sequence[Any]) -> QAItem:
    """The item of a row of :func:`item_lock_sql`: ``LOCK_FIELDS`` read, the other fields deferred."""
    return from_row(QAItem, _LOCK_COLUMNS, row)


def item_lock(pk: int, *, nowait: bool = False) -> QAItem:
    """Lock the item's row for a move and read what a move needs (``LOCK_FIELDS``); the other fields are deferred.

    A plain cursor rather than ``select_for_update().only(...)``: every review locks its item, and the ORM spent
    longer building that statement than PostgreSQL spent running it. ``nowait``: raise ``OperationalError`` at
    once instead of waiting for another transaction's lock. Raises ``QAItem.DoesNotExist`` for an unknown id."""
    with connection.cursor() as cursor:
        cursor.execute(item_lock_sql(nowait=nowait), [pk])
        row = cursor.fetchone()
    if row is None:
        raise QAItem.DoesNotExist(f"no item {pk}")
    return item_from_lock_row(row)


@dataclass(frozen=True)
class Move:
    """One step of an item through the status table: ``action``, with the final judgement for final moves
    (``route``), other columns to write (``fields``) and the audit note."""

    action: str
    note: str = ""
    route: Route | None = None
    fields: dict = field(default_factory=dict)


def item_transition(
    *,
    item: QAItem,
    action: str,
    actor: User | None,
    note: str = "",
    route: Route | None = None,
    row_locked: bool = False,
    fields: dict | None = None,
) -> QAItem:
    """Move ``item`` by ``action`` (see ``annotation.workflow.TRANSITIONS``) and audit it.

    Locks the row first, so two services acting on the same item (a dispute filed while a review is submitted)
    see each other's result instead of overwriting it. ``route`` carries the final judgement for final moves.
    ``row_locked``: the caller already holds the row lock in this transaction and ``item`` carries the row's
    current ``LOCK_FIELDS`` (saves a round trip on the review hot path). ``fields``: other columns to write in the
    same UPDATE. Raises :class:`Conflict` on a move the table does not allow. Updates ``item`` in place.
    """
    return item_moves(item=item, moves=[Move(action, note, route, fields or {})], actor=actor, row_locked=row_locked)


def item_moves(*, item: QAItem, moves: Sequence[Move], actor: User | None, row_locked: bool = False) -> QAItem:
    """Several moves in a row (a primary review is stored, then routed), as :func:`item_transition` makes one.

    Each move is checked against the table from the status the one before it reached; the row is written once, with
    every move's columns, and each move gets its own audit entry. If any move is refused, none is written."""
    # No savepoint (two fewer round trips on the hot path); an illegal move is detected before anything is written
    # and raised after the block, so it never leaves the caller's transaction marked for rollback.
    with transaction.atomic(savepoint=False):
        locked = item if row_locked else item_lock(item.pk)
        state = {
            "status": locked.status,
            "held_from": locked.held_from,
            **{f: getattr(locked, f) for f in _FINAL_FIELDS},
        }
        written: dict = {}
        entries = []
        refused = ""
        for move in moves:
            try:
                target = next_status(state["status"], move.action, held_from=state["held_from"])
            except IllegalTransition as exc:
                refused = str(exc)
                break
            before = {f: state[f] for f in ("status", *_FINAL_FIELDS)}
            changes = _changes(state=state, target=target, move=move)
            written.update(changes)
            state.update({f: changes[f] for f in state if f in changes})
            entries.append((move, before, {f: state[f] for f in ("status", *_FINAL_FIELDS)}))
        if not refused:
            update_row(QAItem, locked.pk, written)
            for column, value in written.items():
                setattr(item, column, value)
            for move, before, after in entries:
                audit_record(
                    actor=actor, obj=item, action=f"item_{move.action}", before=before, after=after, note=move.note
                )
    if refused:
        raise Conflict(refused, code="illegal_transition")
    return item


def _changes(*, state: dict, target: str, move: Move) -> dict:
    """The columns one move writes, from the item's state before it."""
    changes: dict = {**move.fields, "status": target}
    if move.action == Action.HOLD:
        changes["held_from"] = state["status"]
    elif state["status"] == ItemStatus.HELD:
        changes["held_from"] = ""
    route = move.route
    if route is not None and route.final_source:
        changes.update(
            final_verdict=route.final_verdict,
            final_relevance=route.final_relevance,
            final_source=route.final_source,
            finalized_at=timezone.now(),
        )
    return changes
