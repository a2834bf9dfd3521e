"""The one place an item's status changes: lock, check the move against the table, write, audit."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotation.models import QAItem
from annotation.workflow import Action, IllegalTransition, ItemStatus, Route, next_status
from portal.audit import audit_record
from portal.errors import Conflict

_FINAL_FIELDS = ("final_verdict", "final_relevance", "final_source")


def item_transition(*, item: QAItem, action: str, actor, note: str = "", route: Route | None = None) -> QAItem:
    """Move ``item`` by ``action`` (see ``annotation.workflow.TRANSITIONS``) and audit it.

    Locks the row first, so two services acting on the same item (a dispute filed while a review is submitted)
    see each other's result instead of overwriting it. ``route`` carries the final judgement for final moves.
    Raises :class:`Conflict` on a move the table does not allow. Updates ``item`` in place and returns it.
    """
    with transaction.atomic():
        locked = QAItem.objects.select_for_update().get(pk=item.pk)
        try:
            target = next_status(locked.status, action, held_from=locked.held_from)
        except IllegalTransition as exc:
            raise Conflict(str(exc), code="illegal_transition") from None
        before = {"status": locked.status, **{f: getattr(locked, f) for f in _FINAL_FIELDS}}
        changes: dict = {"status": target}
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
        after = {"status": target, **{f: getattr(item, f) for f in _FINAL_FIELDS}}
        audit_record(actor=actor, obj=item, action=f"item_{action}", before=before, after=after, note=note)
    return item
