"""What the review queue still holds for one reviewer: "N left for you", the batch's share done, and the words the
type filter uses when it runs dry. Read-only; the queue itself is ``annotation.services.queue``."""

from __future__ import annotations

import random
from collections import Counter
from functools import cache

from django.db import connection
from django.db.models import Count, QuerySet
from django.utils import timezone

from annotation.models import Assignment, GoldItem, ImportBatch, ItemExposure, QAItem, VettingConfig
from annotation.qa_types import qa_type_label
from annotation.selectors.blinding import REVIEWS, review_barred_q, review_free_sql
from annotation.workflow import ItemStatus, Stage

_WAITING = (ItemStatus.IMPORTED.value, ItemStatus.IN_REVIEW.value, ItemStatus.IN_SECOND_REVIEW.value)


@cache
def _waiting_sql() -> str:
    item, assignment, gold, batch, exposure = (
        QAItem._meta.db_table,
        Assignment._meta.db_table,
        GoldItem._meta.db_table,
        ImportBatch._meta.db_table,
        ItemExposure._meta.db_table,
    )
    active, submitted = Assignment.Status.ACTIVE.value, Assignment.Status.SUBMITTED.value
    primary, secondary = Stage.PRIMARY.value, Stage.SECONDARY.value
    imported, in_review, in_second = _WAITING
    waiting = f"i.status IN ('{imported}', '{in_review}', '{in_second}') AND i.batch_id = ANY(ub.ids)"
    # The queue's conditions (annotation/services/queue.py), counted per type and batch: items of unpaused batches
    # waiting for a review, less those this person may not be given now (the blinding rule refuses them, they are
    # gold, or the stage slot is taken). Shown on every review page, so it never walks the item rows: the waiting items
    # are counted on the (batch, status, type) index, and only the few items named by a lease, an exposure or a gold
    # entry are looked at one by one.
    return f"""
        WITH ub AS (SELECT array_agg(id) AS ids FROM {batch} WHERE NOT paused),
        waiting AS (
            SELECT i.qa_type, i.batch_id, count(*) AS n FROM {item} i, ub WHERE {waiting}
            GROUP BY i.qa_type, i.batch_id),
        named AS (
            SELECT item_id FROM {assignment} WHERE reviewer_id = %(reviewer)s
            UNION SELECT item_id FROM {exposure} WHERE person_id = %(reviewer)s AND kind = '{REVIEWS}'
            UNION SELECT item_id FROM {gold}
            UNION SELECT item_id FROM {assignment} WHERE status = '{active}' AND expires_at > %(now)s
            UNION SELECT item_id FROM {assignment} WHERE status = '{submitted}' AND stage = '{secondary}'
                AND item_id IN (SELECT id FROM {item} WHERE status = '{in_second}')),
        refused AS (
            SELECT i.qa_type, i.batch_id, count(*) AS n FROM {item} i, ub
            WHERE i.id IN (SELECT item_id FROM named) AND {waiting}
              AND (NOT ({review_free_sql(item="i.id", person="%(reviewer)s")})
                   OR EXISTS (SELECT 1 FROM {gold} g WHERE g.item_id = i.id)
                   OR (i.status = '{in_review}' AND EXISTS (
                       SELECT 1 FROM {assignment} l WHERE l.item_id = i.id AND l.stage = '{primary}'
                       AND l.status = '{active}' AND l.expires_at > %(now)s))
                   OR (i.status = '{in_second}' AND EXISTS (
                       SELECT 1 FROM {assignment} l WHERE l.item_id = i.id AND l.stage = '{secondary}'
                       AND ((l.status = '{active}' AND l.expires_at > %(now)s) OR l.status = '{submitted}'))))
            GROUP BY i.qa_type, i.batch_id)
        SELECT w.qa_type, w.batch_id, w.n - coalesce(r.n, 0)
        FROM waiting w LEFT JOIN refused r ON r.qa_type = w.qa_type AND r.batch_id = w.batch_id"""


def _waiting(reviewer, *, now=None) -> list[tuple[str, int, int]]:
    """``(QA type, batch id, count)`` of the items the queue could hand ``reviewer`` now (gold items aside)."""
    with connection.cursor() as cursor:
        cursor.execute(_waiting_sql(), {"reviewer": reviewer.pk, "now": now or timezone.now()})
        return [(qa_type, batch_id, n) for qa_type, batch_id, n in cursor.fetchall() if n]


def waiting_by_type(reviewer, *, now=None) -> dict[str, int]:
    """Items the queue could hand ``reviewer`` now, per QA type (gold items aside: they are mixed in on top)."""
    by_type: Counter[str] = Counter()
    for qa_type, _, n in _waiting(reviewer, now=now):
        by_type[qa_type] += n
    return dict(by_type)


def gold_offerable(reviewer) -> QuerySet[GoldItem]:
    """The gold items the queue may still mix into ``reviewer``'s items (``annotation.services.queue`` takes them from
    here): the active ones the blinding rule lets them review, as for every other item (never twice, never one whose
    other judgements they read: ``annotation.selectors.blinding.review_barred_q``)."""
    return GoldItem.objects.filter(active=True).exclude(review_barred_q(reviewer, "item__"))


def gold_left_for(reviewer) -> int:
    """How many gold items ``reviewer`` may still be given: none while the gold rate is 0 (none is handed out)."""
    if VettingConfig.load().gold_rate <= 0:
        return 0
    return gold_offerable(reviewer).count()


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


def queue_outlook(reviewer, *, lease: Assignment | None = None) -> dict:
    """The review page's line: items left for this person (the open one included) and the current batch's share.

    A gold item must look like any other (security report, finding 3). Counting only the real items, the number
    would stand still on a gold lease (a gold item is not in the real queue) or, had a gold lease been counted as a
    real one, on the lease after it. So the gold items this person may still be given count as items left: every
    lease, gold or real, takes exactly one off. And the batch named is the one the person's real items come from,
    not the gold item's own (often an old, finished batch)."""
    waiting = _waiting(reviewer)
    left = sum(n for _, _, n in waiting) + gold_left_for(reviewer)
    outlook: dict = {"left": left + (1 if lease is not None else 0)}
    if lease is not None:
        batch_id = lease.item.batch_id if lease.stage != Stage.GOLD else _queue_batch_of(reviewer, lease, waiting)
        if batch_id is not None:
            outlook["batch"] = batch_done_share(batch_id)
    return outlook


def _queue_batch_of(reviewer, lease: Assignment, waiting: list[tuple[str, int, int]]) -> int | None:
    """The batch to name on a gold lease: one the person's queue hands real items from now.

    The queue takes real items from its highest-priority unpaused batches that have any for the person, mixed by its
    random order, so a batch comes up about as often as its share of the waiting items: drawn so, once per lease
    (the same batch on every reload of the page, as a real lease keeps its item's batch). With nothing waiting, the
    batch of the person's latest real lease (their last real item may well have been the batch's last)."""
    per_batch: Counter[int] = Counter()
    for _, batch_id, n in waiting:
        per_batch[batch_id] += n
    if per_batch:
        priority = dict(ImportBatch.objects.filter(pk__in=list(per_batch)).values_list("pk", "priority"))
        top = max(priority.values())
        batches = sorted(pk for pk in per_batch if priority[pk] == top)
        point = random.Random(lease.pk).random() * sum(per_batch[pk] for pk in batches)
        for pk in batches:
            point -= per_batch[pk]
            if point < 0:
                return pk
        return batches[-1]
    latest = Assignment.objects.filter(reviewer=reviewer).exclude(stage=Stage.GOLD).order_by("-created_at", "-id")
    return latest.values_list("item__batch_id", flat=True).first()


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
