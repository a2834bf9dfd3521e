"""Gold items: known verdicts mixed into review queues to measure reviewer accuracy."""

from __future__ import annotations

from django.db import transaction

from annotation.models import GoldItem, QAItem
from annotation.workflow import ItemStatus, Verdict
from portal.audit import audit_record
from portal.errors import Conflict, DomainError


def gold_mark(*, item: QAItem, expected_verdict: str, by, planted_error: bool = False, note: str = "") -> GoldItem:
    """Make ``item`` a gold item. Only an item nobody has reviewed may become gold: a gold item leaves the real
    workflow (it is never released) and answers on it are stored as gold answers, not reviews."""
    if expected_verdict not in Verdict.values:
        raise DomainError(f"expected verdict must be one of {', '.join(Verdict.values)}", code="invalid_verdict")
    with transaction.atomic():
        locked = QAItem.objects.select_for_update().get(pk=item.pk)
        if locked.status not in (ItemStatus.IMPORTED,) or locked.reviews.exists():
            raise Conflict(
                f"item {locked.uid} is already in review ({locked.status}); pick an unreviewed item",
                code="already_reviewed",
            )
        gold, created = GoldItem.objects.update_or_create(
            item=locked,
            defaults={
                "expected_verdict": expected_verdict,
                "planted_error": planted_error,
                "note": note,
                "active": True,
                "created_by": by,
            },
        )
        audit_record(
            actor=by,
            obj=locked,
            action="gold_marked" if created else "gold_updated",
            after={"expected_verdict": expected_verdict, "planted_error": planted_error},
        )
    return gold


def gold_unmark(*, gold: GoldItem, by) -> GoldItem:
    """Stop handing out a gold item (its answers are kept for the accuracy figures)."""
    gold.active = False
    gold.save(update_fields=["active"])
    audit_record(actor=by, obj=gold.item, action="gold_deactivated")
    return gold
