"""What the review queue still holds for one reviewer: "N left for you", the batch's share done, and the words the
type filter uses when it runs dry. Read-only; the queue itself is ``annotation.services.queue``."""

from __future__ import annotations

from functools import cache

from django.db import connection
from django.db.models import Count
from django.utils import timezone

from annotation.models import Assignment, GoldItem, ImportBatch, QAItem
from annotation.qa_types import qa_type_label
from annotation.workflow import ItemStatus, Stage

_WAITING = (ItemStatus.IMPORTED.value, ItemStatus.IN_REVIEW.value, ItemStatus.IN_SECOND_REVIEW.value)


@cache
def _waiting_sql() -> str:
    item, assignment, gold, batch = (
        QAItem._meta.db_table,
        Assignment._meta.db_table,
        GoldItem._meta.db_table,
        ImportBatch._meta.db_table,
    )
    active, submitted = Assignment.Status.ACTIVE.value, Assignment.Status.SUBMITTED.value
    primary, secondary = Stage.PRIMARY.value, Stage.SECONDARY.value
    imported, in_review, in_second = _WAITING
    waiting = f"i.status IN ('{imported}', '{in_review}', '{in_second}') AND i.batch_id = ANY(ub.ids)"
    # The queue's conditions (annotation/services/queue.py), counted per type: items of unpaused batches waiting
    # for a review, less those this person may not be given now (their own, gold, or the stage slot taken). Shown
    # on every review page, so it never walks the item rows: the waiting items are counted on the (batch, status,
    # type) index, and only the few items named by a lease or a gold entry are looked at one by one.
    return f"""
        WITH ub AS (SELECT array_agg(id) AS ids FROM {batch} WHERE NOT paused),
        waiting AS (
            SELECT i.qa_type, count(*) AS n FROM {item} i, ub WHERE {waiting} GROUP BY i.qa_type),
        named AS (
            SELECT item_id FROM {assignment} WHERE reviewer_id = %(reviewer)s
            UNION SELECT item_id FROM {gold}
            UNION SELECT item_id FROM {assignment} WHERE status = '{active}' AND expires_at > %(now)s
            UNION SELECT item_id FROM {assignment} WHERE status = '{submitted}' AND stage = '{secondary}'
                AND item_id IN (SELECT id FROM {item} WHERE status = '{in_second}')),
        refused AS (
            SELECT i.qa_type, count(*) AS n FROM {item} i, ub WHERE i.id IN (SELECT item_id FROM named) AND {waiting}
              AND (EXISTS (SELECT 1 FROM {assignment} m WHERE m.item_id = i.id AND m.reviewer_id = %(reviewer)s)
                   OR EXISTS (SELECT 1 FROM {gold} g WHERE g.item_id = i.id)
                   OR (i.status = '{in_review}' AND EXISTS (
                       SELECT 1 FROM {assignment} l WHERE l.item_id = i.id AND l.stage = '{primary}'
                       AND l.status = '{active}' AND l.expires_at > %(now)s))
                   OR (i.status = '{in_second}' AND EXISTS (
                       SELECT 1 FROM {assignment} l WHERE l.item_id = i.id AND l.stage = '{secondary}'
                       AND ((l.status = '{active}' AND l.expires_at > %(now)s) OR l.status = '{submitted}'))))
            GROUP BY i.qa_type)
        SELECT w.qa_type, w.n - coalesce(r.n, 0) FROM waiting w LEFT JOIN refused r ON r.qa_type = w.qa_type"""


def waiting_by_type(reviewer, *, now=None) -> dict[str, int]:
    """Items the queue could hand ``reviewer`` now, per QA type (gold items aside: they are mixed in on top)."""
    with connection.cursor() as cursor:
        cursor.execute(_waiting_sql(), {"reviewer": reviewer.pk, "now": now or timezone.now()})
        return {qa_type: n for qa_type, n in cursor.fetchall() if n}


def batch_done_share(batch_id: int) -> dict:
    """The batch's name and the share of its (non-gold) items with a final judgement, in whole percent."""
    batch = ImportBatch.objects.filter(pk=batch_id).values("name").first() or {"name": ""}
    # Counted on the (batch, status, type) index; the few gold items of the batch are taken off afterwards.
    by_status = dict(QAItem.objects.filter(batch_id=batch_id).order_by().values_list("status").annotate(n=Count("*")))
    gold = dict(
        QAItem.objects.filter(batch_id=batch_id, gold__isnull=False)
        .order_by()
        .values_list("status")
        .annotate(n=Count("*"))
    )
    total = sum(by_status.values()) - sum(gold.values())
    final = sum(by_status.get(s, 0) - gold.get(s, 0) for s in (ItemStatus.VERIFIED, ItemStatus.REJECTED))
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
    label = qa_type_label(qa_type).lower()
    if not waiting:
        return f"No more {label} items for you, and no items of other types are waiting for you either. Thank you!"
    others = sum(waiting.values())
    parts = ", ".join(
        f"{n} {qa_type_label(t).lower()}" for t, n in sorted(waiting.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    noun = "item" if others == 1 else "items"
    verb = "is" if others == 1 else "are"
    return f"No more {label} items for you; {others} {noun} of other types {verb} waiting ({parts})."


def filter_bypassed_message(*, qa_type: str, served_type: str) -> str:
    """Why the filter did not apply: the person's open lease is always served first."""
    return (
        f"You asked for {qa_type_label(qa_type).lower()} items, but you still have an open {qa_type_label(served_type).lower()} "
        "item: it comes first. The filter applies from your next item."
    )
