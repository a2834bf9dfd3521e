"""What the review queue still holds for one reviewer: "N left for you", the batch's share done, and the words the
type filter uses when it runs dry. Read-only; the queue itself is ``annotation.services.queue``."""

from __future__ import annotations

from functools import cache

from django.db import connection
from django.utils import timezone

from annotation.models import Assignment, GoldItem, ImportBatch, QAItem
from annotation.qa_types import QA_TYPE_LABELS, QAType
from annotation.workflow import ItemStatus, Stage


def type_label(qa_type: str) -> str:
    try:
        return QA_TYPE_LABELS[QAType(qa_type)]
    except ValueError:
        return qa_type


@cache
def _waiting_sql() -> str:
    item, assignment, gold, batch = (
        QAItem._meta.db_table,
        Assignment._meta.db_table,
        GoldItem._meta.db_table,
        ImportBatch._meta.db_table,
    )
    active, submitted = Assignment.Status.ACTIVE.value, Assignment.Status.SUBMITTED.value
    live = f"l.status = '{active}' AND l.expires_at > %(now)s"
    s = ItemStatus
    # The same conditions as the queue's candidate query (annotation/services/queue.py), counted per type: items of
    # unpaused batches this person was never given, not gold, whose stage slot is free now.
    return f"""
        SELECT i.qa_type, count(*) FROM {item} i JOIN {batch} b ON b.id = i.batch_id AND NOT b.paused
        WHERE i.status IN ('{s.IMPORTED.value}', '{s.IN_REVIEW.value}', '{s.IN_SECOND_REVIEW.value}')
          AND NOT EXISTS (SELECT 1 FROM {gold} g WHERE g.item_id = i.id)
          AND NOT EXISTS (SELECT 1 FROM {assignment} m WHERE m.item_id = i.id AND m.reviewer_id = %(reviewer)s)
          AND (i.status = '{s.IMPORTED.value}'
               OR (i.status = '{s.IN_REVIEW.value}' AND NOT EXISTS (
                   SELECT 1 FROM {assignment} l WHERE l.item_id = i.id AND l.stage = '{Stage.PRIMARY.value}'
                   AND {live}))
               OR (i.status = '{s.IN_SECOND_REVIEW.value}' AND NOT EXISTS (
                   SELECT 1 FROM {assignment} l WHERE l.item_id = i.id AND l.stage = '{Stage.SECONDARY.value}'
                   AND ({live} OR l.status = '{submitted}'))))
        GROUP BY i.qa_type"""


def waiting_by_type(reviewer, *, now=None) -> dict[str, int]:
    """Items the queue could hand ``reviewer`` now, per QA type (gold items aside: they are mixed in on top)."""
    with connection.cursor() as cursor:
        cursor.execute(_waiting_sql(), {"reviewer": reviewer.pk, "now": now or timezone.now()})
        return dict(cursor.fetchall())


def batch_done_share(batch_id: int) -> dict:
    """The batch's name and the share of its (non-gold) items with a final judgement, in whole percent."""
    batch = ImportBatch.objects.filter(pk=batch_id).values("name").first() or {"name": ""}
    items = QAItem.objects.filter(batch_id=batch_id, gold__isnull=True)
    total = items.count()
    final = items.filter(status__in=[ItemStatus.VERIFIED, ItemStatus.REJECTED]).count()
    percent = int(100 * final / total) if total else 0  # floor: "100 %" only when every item is final
    return {"name": batch["name"], "percent": percent, "final": final, "total": total}


def queue_outlook(reviewer, *, item: QAItem | None = None) -> dict:
    """The review page's line: items left for this person (the open one included) and the current batch's share."""
    waiting = waiting_by_type(reviewer)
    outlook = {"left": sum(waiting.values()) + (1 if item is not None else 0)}
    if item is not None:
        outlook["batch"] = batch_done_share(item.batch_id)
    return outlook


def filter_exhausted_message(reviewer, qa_type: str) -> str:
    """What to tell a reviewer whose type filter found nothing: how many items of other types wait, in words."""
    waiting = {t: n for t, n in waiting_by_type(reviewer).items() if t != qa_type and n}
    label = type_label(qa_type).lower()
    if not waiting:
        return f"No more {label} items for you, and no items of other types are waiting for you either. Thank you!"
    others = sum(waiting.values())
    parts = ", ".join(
        f"{n} {type_label(t).lower()}" for t, n in sorted(waiting.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    noun = "item" if others == 1 else "items"
    verb = "is" if others == 1 else "are"
    return f"No more {label} items for you; {others} {noun} of other types {verb} waiting ({parts})."


def filter_bypassed_message(*, qa_type: str, served_type: str) -> str:
    """Why the filter did not apply: the person's open lease is always served first."""
    return (
        f"You asked for {type_label(qa_type).lower()} items, but you still have an open {type_label(served_type).lower()} "
        "item: it comes first. The filter applies from your next item."
    )
