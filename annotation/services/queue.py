"""Handing out review leases ("next item"). The decisions are pure (annotation.workflow); this is the DB layer.

Rules enforced here:
- a reviewer with an unexpired lease gets that lease back;
- an item goes to each person at most once (unique (item, reviewer) plus the ``mine`` exclusion);
- at most one live-or-done lease per item and stage (primary: every item; secondary: the drawn share);
- paused batches are skipped, higher batch priority first, second reviews before new primary reviews
  within a priority level (so started items finish), then import order;
- gold items are mixed in at the configured rate and look like any other item.
"""

from __future__ import annotations

import random
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotation.models import Assignment, GoldItem, ImportBatch, QAItem, VettingConfig
from annotation.services.transitions import item_transition
from annotation.workflow import Action, ItemStatus, Stage, offer_gold
from portal.audit import audit_record
from portal.errors import NotAllowed
from portal.roles import can_review

_MAX_TRIES = 20  # candidates to try when the freshly locked row turns out taken (see _slot_taken)


def _lease_seconds() -> int:
    return getattr(settings, "REVIEW_LEASE_SECONDS", 1800)


def _live(now) -> Q:
    return Q(status=Assignment.Status.ACTIVE, expires_at__gt=now)


def _stage_taken_q(stage: str, now) -> Q:
    """A stage slot is taken by a live lease or by a stored review (capacity 1 per stage)."""
    return Q(stage=stage) & (_live(now) | Q(status=Assignment.Status.SUBMITTED))


def assignment_current(*, reviewer, now=None) -> Assignment | None:
    """The reviewer's unexpired lease, if any."""
    now = now or timezone.now()
    return (
        Assignment.objects.filter(reviewer=reviewer)
        .filter(_live(now))
        .select_related("item", "item__passage")
        .order_by("-created_at")
        .first()
    )


def assignment_next(*, reviewer, qa_type: str = "", now=None, gold_draw: float | None = None) -> Assignment | None:
    """Give ``reviewer`` one item to review (or their current lease back); ``None`` when nothing is left."""
    if not can_review(reviewer):
        raise NotAllowed("Only reviewers take items from the review queue.")
    now = now or timezone.now()
    config = VettingConfig.load()
    with transaction.atomic():
        # Race: one person's double click or two tabs. Locking the person's own row serialises their requests,
        # so the second sees the lease the first just took instead of taking a second item.
        get_user_model().objects.select_for_update().filter(pk=reviewer.pk).first()
        active = list(
            Assignment.objects.filter(reviewer=reviewer, status=Assignment.Status.ACTIVE)
            .select_related("item", "item__passage")
            .order_by("-created_at")
        )
        live = [a for a in active if a.expires_at > now]
        if live:
            return live[0]
        if active:
            # Leases of this person that ran out are over; the items return to the queue for others.
            Assignment.objects.filter(pk__in=[a.pk for a in active]).update(
                status=Assignment.Status.RELEASED, finished_at=now
            )
        draw = random.random() if gold_draw is None else gold_draw
        if offer_gold(draw=draw, rate=config.gold_rate):
            assignment = _take_gold(reviewer=reviewer, qa_type=qa_type, now=now)
            if assignment is not None:
                return assignment
        for batch_ids in _batches_by_priority():
            for stage in (Stage.SECONDARY, Stage.PRIMARY):
                if stage == Stage.SECONDARY and not _any_in_second_review(batch_ids):
                    continue  # a cheap EXISTS first: the full candidate query costs milliseconds just to compile
                assignment = _take(reviewer=reviewer, stage=stage, batch_ids=batch_ids, qa_type=qa_type, now=now)
                if assignment is not None:
                    return assignment
    return None


def _batches_by_priority() -> list[list[int]]:
    """Ids of the unpaused batches, grouped by priority, highest first."""
    groups: dict[int, list[int]] = {}
    for pk, priority in ImportBatch.objects.filter(paused=False).values_list("pk", "priority"):
        groups.setdefault(priority, []).append(pk)
    return [groups[p] for p in sorted(groups, reverse=True)]


def _any_in_second_review(batch_ids: list[int]) -> bool:
    return QAItem.objects.filter(batch_id__in=batch_ids, status=ItemStatus.IN_SECOND_REVIEW).exists()


def _candidates(*, reviewer, stage: str, batch_ids: list[int], qa_type: str, now):
    """Free items for this stage, in import order. Written so that PostgreSQL walks a partial queue index in id
    order and stops at the first row passing the NOT EXISTS checks (no join, no sort of all 20,000 items)."""
    mine = Assignment.objects.filter(item=OuterRef("pk"), reviewer=reviewer)
    gold = GoldItem.objects.filter(item=OuterRef("pk"))
    items = QAItem.objects.filter(batch_id__in=batch_ids).exclude(Exists(gold)).exclude(Exists(mine))
    if qa_type:
        items = items.filter(qa_type=qa_type)
    if stage == Stage.PRIMARY:
        live_primary = Assignment.objects.filter(item=OuterRef("pk"), stage=Stage.PRIMARY).filter(_live(now))
        items = items.filter(status__in=[ItemStatus.IMPORTED, ItemStatus.IN_REVIEW]).filter(
            Q(status=ItemStatus.IMPORTED) | Q(~Exists(live_primary), status=ItemStatus.IN_REVIEW)
        )
    else:
        taken = Assignment.objects.filter(item=OuterRef("pk")).filter(_stage_taken_q(Stage.SECONDARY, now))
        items = items.filter(status=ItemStatus.IN_SECOND_REVIEW).exclude(Exists(taken))
    return items.order_by("id")


def _take(*, reviewer, stage: str, batch_ids: list[int], qa_type: str, now) -> Assignment | None:
    tried: list[int] = []
    for _ in range(_MAX_TRIES):
        # Race: 50 reviewers asking at once. FOR UPDATE SKIP LOCKED makes each request lock a different
        # candidate row instead of all queueing on (and then double-assigning) the first free item.
        item = (
            _candidates(reviewer=reviewer, stage=stage, batch_ids=batch_ids, qa_type=qa_type, now=now)
            .exclude(pk__in=tried)
            .select_related("passage")
            .select_for_update(skip_locked=True, of=("self",))
            .first()
        )
        if item is None:
            return None
        # The candidate query's NOT EXISTS ran on a snapshot taken before we held the lock; another request may
        # have committed a lease on this item in between. Re-check with a fresh statement now that we hold it.
        if _slot_taken(item=item, stage=stage, now=now):
            tried.append(item.pk)
            continue
        if item.status != ItemStatus.IMPORTED:  # taking over an expired lease: end it
            Assignment.objects.filter(item=item, stage=stage, status=Assignment.Status.ACTIVE).update(
                status=Assignment.Status.RELEASED, finished_at=now
            )
        assignment = Assignment.objects.create(
            item=item, reviewer=reviewer, stage=stage, expires_at=now + timedelta(seconds=_lease_seconds())
        )
        if stage == Stage.PRIMARY:
            item_transition(
                item=item, action=Action.ASSIGN, actor=reviewer, note=f"assignment {assignment.pk}", row_locked=True
            )
        else:
            audit_record(actor=reviewer, obj=item, action="item_assign_secondary", after={"assignment": assignment.pk})
        assignment.item = item
        return assignment
    return None


def _slot_taken(*, item: QAItem, stage: str, now) -> bool:
    """Whether the freshly locked item's stage slot is already taken. ``item`` holds the row's latest version."""
    if stage == Stage.PRIMARY:
        if item.status == ItemStatus.IMPORTED:
            return False  # every primary lease moves the item out of "imported" in the same transaction
        if item.status != ItemStatus.IN_REVIEW:
            return True
    elif item.status != ItemStatus.IN_SECOND_REVIEW:
        return True
    return Assignment.objects.filter(item=item).filter(_stage_taken_q(stage, now)).exists()


def _take_gold(*, reviewer, qa_type: str, now) -> Assignment | None:
    mine = Assignment.objects.filter(item=OuterRef("item_id"), reviewer=reviewer)
    golds = GoldItem.objects.filter(active=True).exclude(Exists(mine))
    if qa_type:
        golds = golds.filter(item__qa_type=qa_type)
    gold = golds.select_related("item").order_by("?").first()
    if gold is None:
        return None
    # Gold leases have no capacity limit: every reviewer may answer every gold item once.
    assignment = Assignment.objects.create(
        item=gold.item, reviewer=reviewer, stage=Stage.GOLD, expires_at=now + timedelta(seconds=_lease_seconds())
    )
    assignment.item = gold.item
    return assignment


def assignments_expire(*, now=None) -> int:
    """Sweep: end expired leases and put unreviewed primary items back to ``imported``. Safe to run any time."""
    now = now or timezone.now()
    count = 0
    expired = Assignment.objects.filter(status=Assignment.Status.ACTIVE, expires_at__lte=now).values_list(
        "pk", flat=True
    )
    for pk in list(expired[:5000]):
        with transaction.atomic():
            assignment = (
                Assignment.objects.select_for_update(skip_locked=True)
                .filter(pk=pk, status=Assignment.Status.ACTIVE, expires_at__lte=now)
                .select_related("item")
                .first()
            )
            if assignment is None:
                continue
            assignment.status, assignment.finished_at = Assignment.Status.RELEASED, now
            assignment.save(update_fields=["status", "finished_at"])
            count += 1
            item = assignment.item
            still_leased = Assignment.objects.filter(item=item, stage=Stage.PRIMARY).filter(_live(now)).exists()
            if assignment.stage == Stage.PRIMARY and item.status == ItemStatus.IN_REVIEW and not still_leased:
                item_transition(item=item, action=Action.RELEASE, actor=None, note=f"lease {pk} expired")
    return count
