"""Gold items: known verdicts mixed into review queues to measure reviewer accuracy."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from annotation.importers import gold as gold_files
from annotation.models import GoldItem, QAItem
from annotation.workflow import ItemStatus, Verdict
from portal.audit import audit_record
from portal.errors import Conflict, DomainError
from portal.importing import ImportProblem
from portal.models import User
from portal.uploads import upload_limits


def gold_mark(
    *, item: QAItem, expected_verdict: str, by: User | None, planted_error: bool = False, note: str = ""
) -> GoldItem:
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


def gold_unmark(*, gold: GoldItem, by: User) -> GoldItem:
    """Stop handing out a gold item (its answers are kept for the accuracy figures)."""
    gold.active = False
    gold.save(update_fields=["active"])
    audit_record(actor=by, obj=gold.item, action="gold_deactivated")
    return gold


def gold_import(*, path: Path, by: User | None, display: str | None = None) -> dict:
    """Mark every item listed in a gold file (see :mod:`annotation.importers.gold`), all or nothing: an unknown uid
    or an item already in review refuses the whole file, naming the record. Re-importing the same file changes
    nothing but the audit trail; a changed verdict or note updates the gold item."""
    display = display or path.name
    rows = gold_files.parse_file(path, upload_limits(), display)
    items = QAItem.objects.in_bulk([row.uid for row in rows], field_name="uid")
    already_gold = set(GoldItem.objects.filter(item__uid__in=list(items)).values_list("item__uid", flat=True))
    with transaction.atomic():
        for row in rows:
            item = items.get(row.uid)
            if item is None:
                raise ImportProblem(display, f"no item with uid {row.uid!r}", record=row.record, field="uid")
            try:
                gold_mark(
                    item=item, expected_verdict=row.expected_verdict, by=by, planted_error=row.planted_error,
                    note=row.note,
                )  # fmt: skip
            except Conflict as exc:
                raise ImportProblem(display, str(exc), record=row.record, field="uid") from exc
    updated = sum(row.uid in already_gold for row in rows)
    return {"created": len(rows) - updated, "updated": updated}
