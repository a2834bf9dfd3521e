"""The one place an item's status changes: lock, check the move against the table, write, audit."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotation.models import QAItem
from annotation.workflow import Action, IllegalTransition, ItemStatus, Route, next_status
from portal.audit import audit_record
from portal.errors import Conflict
from portal.models import User

_FINAL_FIELDS = ("final_verdict", "final_relevance", "final_source")


LOCK_FIELDS = ("pk", "uid", "status", "held_from", *_FINAL_FIELDS)


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
    # No savepoint (two fewer round trips on the hot path); an illegal move is detected before anything is written
    # and raised after the block, so it never leaves the caller's transaction marked for rollback.
    with transaction.atomic(savepoint=False):
        locked = item if row_locked else QAItem.objects.select_for_update().only(*LOCK_FIELDS).get(pk=item.pk)
        try:
            target = next_status(locked.status, action, held_from=locked.held_from)
        except IllegalTransition as exc:
            refused = str(exc)
        else:
            refused = ""
            _write(
                item=item,
                locked=locked,
                target=target,
                action=action,
                actor=actor,
                note=note,
                route=route,
                fields=fields or {},
            )
    if refused:
        raise Conflict(refused, code="illegal_transition")
    return item


def _write(
    *,
    item: QAItem,
    locked: QAItem,
    target: str,
    action: str,
    actor: User | None,
    note: str,
    route: Route | None,
    fields: dict,
) -> None:
    before = {"status": locked.status, **{f: getattr(locked, f) for f in _FINAL_FIELDS}}
    changes: dict = {**fields, "status": target}
    if action == Action.HOLD:
        changes["held_from"] = locked.status
    elif locked.status == ItemStatus.HELD:
        changes["held_from"] = ""
    if route is not None and route.final_source:
        changes.update(
            final_verdict=route.final_verdict,
            final_relevance=route.final_relevance,
            final_source=route.final_source,
            finalized_at=timezone.now(),
        )
    QAItem.objects.filter(pk=locked.pk).update(**changes)
    for field, value in changes.items():
        setattr(item, field, value)
    after = {"status": target, **{f: changes.get(f, getattr(locked, f)) for f in _FINAL_FIELDS}}
    audit_record(actor=actor, obj=item, action=f"item_{action}", before=before, after=after, note=note)
