"""Handing out review leases ("next item"). The decisions are pure (annotation.workflow); this is the DB layer.

Rules enforced here:
- a reviewer with an unexpired lease gets that lease back;
- an item goes to each person at most once (unique (item, reviewer) plus the blinding rule's exclusion), and never
  to a person who read its other reviews (``annotation.selectors.blinding.review_barred_q``);
- at most one live-or-done lease per item and stage (primary: every item; secondary: the drawn share);
- paused batches are skipped, higher batch priority first, second reviews before new primary reviews
  within a priority level (so started items finish), then a seeded random order per reviewer (not import order:
  see ``annotation.workflow.queue_order``);
- gold items are mixed in at the configured rate and look like any other item.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from annotation.models import (
    Assignment,
    GoldItem,
    GuidelineVersion,
    ImportBatch,
    QAItem,
    SourcePassage,
    VettingConfig,
)
from annotation.selectors.blinding import review_free_sql
from annotation.selectors.guidelines import guideline_current_sql, guideline_of_new_lease
from annotation.selectors.queue import gold_offerable
from annotation.services.transitions import item_transition
from annotation.workflow import Action, ItemStatus, Stage, offer_gold, queue_start
from portal.audit import audit_batch, audit_record
from portal.bulk import columns_sql, from_row, insert_rows, next_id_sql, row_fields, writes_deferred
from portal.errors import Conflict, DomainError, NotAllowed
from portal.models import User
from portal.prepared import prepared_cursor
from portal.roles import can_review

_MAX_TRIES = 20  # candidates to try when the freshly locked row turns out taken (see _slot_claim)


def lease_seconds() -> int:
    """How long a review lease holds its item (``REVIEW_LEASE_SECONDS``, 30 minutes by default)."""
    return getattr(settings, "REVIEW_LEASE_SECONDS", 1800)


def _live(now: datetime) -> Q:
    return Q(status=Assignment.Status.ACTIVE, expires_at__gt=now)


def assignment_current(*, reviewer: User, now: datetime | None = None) -> Assignment | None:
    """The reviewer's unexpired lease, if any."""
    now = now or timezone.now()
    return (
        Assignment.objects.filter(reviewer=reviewer)
        .filter(_live(now))
        .select_related("item", "item__passage", "guideline")
        .order_by("-created_at")
        .first()
    )


def assignment_next(
    *, reviewer: User, qa_type: str = "", now: datetime | None = None, gold_draw: float | None = None
) -> Assignment | None:
    """Give ``reviewer`` one item to review (or their current lease back); ``None`` when nothing is left."""
    if not can_review(reviewer):
        raise NotAllowed("Only reviewers take items from the review queue.")
    now = now or timezone.now()
    # A lease is not a judgement: if PostgreSQL crashed before this commit reached disk, the lease (and its audit
    # entry) vanish together and the item is simply back in the queue. Not waiting for the WAL flush takes a disk
    # sync off every "next"; a review submitted on this lease commits synchronously, which flushes the lease first.
    # Only when the transaction is ours alone: inside a caller's transaction it could hold a judgement too. (The same
    # goes for the planner settings of _sql()["own_leases"].)
    lease_only = not connection.in_atomic_block
    # The item's move and its audit entry travel together in one round trip when the block ends (nothing reads them
    # back).
    with transaction.atomic(), writes_deferred(), audit_batch(), connection.cursor() as cursor:
        # Race: one person's double click or two tabs. Locking the person's own row serialises their requests,
        # so the second sees the lease the first just took instead of taking a second item. The lease list is a
        # separate statement so that it reads a snapshot taken after the lock was granted. The four statements
        # (with the batch list) travel in one round trip.
        cursor.execute(_sql()["own_leases"], {"reviewer": reviewer.pk, "lease_only": lease_only})
        cursor.nextset()
        cursor.nextset()
        active = cursor.fetchall()
        cursor.nextset()
        rows = cursor.fetchall()
        live = [pk for pk, expires_at in active if expires_at > now]
        if live:
            return Assignment.objects.select_related("item", "item__passage", "guideline").get(pk=live[0])
        if active:
            # Leases of this person that ran out are over; the items return to the queue for others.
            Assignment.objects.filter(pk__in=[pk for pk, _ in active]).update(
                status=Assignment.Status.RELEASED, finished_at=now
            )
        if not rows:
            return None
        gold_rate = rows[0][2] if rows[0][2] is not None else VettingConfig.load().gold_rate
        draw = random.random() if gold_draw is None else gold_draw
        if offer_gold(draw=draw, rate=gold_rate):
            assignment = _take_gold(reviewer=reviewer, qa_type=qa_type, now=now)
            if assignment is not None:
                return assignment
        seed = rows[0][3] if rows[0][3] is not None else VettingConfig.load().seed
        start = queue_start(seed=seed, reviewer_id=reviewer.pk)
        for batch_ids in _batches_by_priority(rows):
            assignment = _take(reviewer=reviewer, batch_ids=batch_ids, qa_type=qa_type, now=now, start=start)
            if assignment is not None:
                return assignment
    return None


def _batches_by_priority(rows: Sequence[Sequence[Any]]) -> list[list[int]]:
    """Ids of the unpaused batches (rows of the last statement of ``_sql()["own_leases"]``), by priority, highest first.

    The third and fourth columns of those rows are the gold rate and the seed, which ride along to save a round trip
    (NULL until the config row exists)."""
    groups: dict[int, list[int]] = {}
    for pk, priority, *_ in rows:
        groups.setdefault(priority, []).append(pk)
    return [groups[p] for p in sorted(groups, reverse=True)]


# "next" is the request every reviewer makes hundreds of times a day, so its statements are written out once here
# instead of being compiled by the ORM on every call (the ORM spent longer building the candidate query than
# PostgreSQL spent running it). Table and column names come from the models, so a rename still fails loudly.
@cache
def _sql() -> dict[str, str]:
    item, assignment = QAItem._meta.db_table, Assignment._meta.db_table
    gold, passage = GoldItem._meta.db_table, SourcePassage._meta.db_table
    user, batch, config = get_user_model()._meta.db_table, ImportBatch._meta.db_table, VettingConfig._meta.db_table
    active, submitted = Assignment.Status.ACTIVE.value, Assignment.Status.SUBMITTED.value
    released = Assignment.Status.RELEASED.value
    imported, in_review, in_second = (
        ItemStatus.IMPORTED.value,
        ItemStatus.IN_REVIEW.value,
        ItemStatus.IN_SECOND_REVIEW.value,
    )
    primary, secondary = Stage.PRIMARY.value, Stage.SECONDARY.value
    guideline_columns = columns_sql(_GUIDELINE_FIELDS, "g", prefix="guideline_")
    # The blinding rule (one home: annotation.selectors.blinding): never an item the reviewer was given before, nor
    # one whose other reviews they read (on the adjudication page, an item page, a dispute).
    review_free = review_free_sql(item="i.id", person="%(reviewer)s")
    live = f"l.status = '{active}' AND l.expires_at > %(now)s"
    # Each branch is written so that PostgreSQL walks a partial queue index in (queue_key, id) order and stops at
    # the first row passing the NOT EXISTS checks (no join, no sort of every item). Second reviews come first
    # (so started items finish); under the outer LIMIT a later branch only runs when the earlier ones found nothing.
    # Each stage has two branches: keys from the reviewer's starting point up, then the keys below it (the wrap).
    # ``tried``: rows found taken after locking them (see _slot_claim).
    # ``OFFSET 0`` keeps a check a look-up of the item's own rows, run per item (PostgreSQL does not turn a subquery
    # with an OFFSET into a join). As a join, the plan made while the lease table was empty (a new vetting round; the
    # plan is kept: see "own_leases" below) read every second-review lease, or every lease of the reviewer, for each
    # item it walked past, so a "next" cost PostgreSQL more as leases piled up (bench_capacity.py --pg-statements;
    # tests/annotation/test_queue_plan.py).
    branch = f"""
        SELECT * FROM (
            SELECT i.*, (SELECT p.text FROM {passage} p WHERE p.id = i.passage_id) AS passage_text,
                   '{{stage}}' AS queue_stage
            FROM {item} i
            WHERE {{status}} AND i.batch_id = ANY(%(batches)s) AND (%(qa_type)s = '' OR i.qa_type = %(qa_type)s)
              AND i.id <> ALL(%(tried)s)
              AND NOT EXISTS (SELECT 1 FROM {gold} g WHERE g.item_id = i.id OFFSET 0)
              AND {review_free} AND {{free}} AND {{part}}
            ORDER BY i.queue_key, i.id
            LIMIT 1
            FOR UPDATE OF i SKIP LOCKED
        ) {{stage}}_{{name}}"""
    parts = {"from_start": "i.queue_key >= %(start)s", "wrapped": "i.queue_key < %(start)s"}
    secondary_free = f"""NOT EXISTS (
            SELECT 1 FROM {assignment} l WHERE l.item_id = i.id AND l.stage = '{secondary}'
            AND ({live} OR l.status = '{submitted}') OFFSET 0)"""
    primary_free = f"""(i.status = '{imported}' OR NOT EXISTS (
            SELECT 1 FROM {assignment} l WHERE l.item_id = i.id AND l.stage = '{primary}' AND {live}))"""
    secondary_branch = " UNION ALL ".join(
        branch.format(stage=secondary, status=f"i.status = '{in_second}'", free=secondary_free, part=part, name=name)
        for name, part in parts.items()
    )
    primary_branch = " UNION ALL ".join(
        branch.format(
            stage=primary, status=f"i.status IN ('{imported}', '{in_review}')", free=primary_free, part=part, name=name
        )
        for name, part in parts.items()
    )
    # The lease's own transaction (not a caller's, whose later statements keep the planning it chose) plans without
    # sequential scans, and its prepared statement (the candidate) with its generic plan at once. The candidate is
    # prepared once per connection, and PostgreSQL keeps the plan it settles on. Made while the lease table was a
    # page or two (a new deployment, a new vetting round), that plan scanned the whole lease table for every item it
    # looked at, and it stayed cached while the table grew, so every "next" paid for a scan that grew with the table
    # (bench_capacity.py --pg-statements; tests/annotation/test_queue_plan.py). Every look-up here has its
    # index, so none needs a scan, and the generic plan walks the same indexes whatever the parameters; without
    # force_generic_plan, PostgreSQL kept planning the statement afresh on many runs.
    statements = {
        "own_leases": f"""
            SELECT set_config('synchronous_commit',
                CASE WHEN %(lease_only)s THEN 'off' ELSE current_setting('synchronous_commit') END, true),
                set_config('enable_seqscan',
                CASE WHEN %(lease_only)s THEN 'off' ELSE current_setting('enable_seqscan') END, true),
                set_config('plan_cache_mode',
                CASE WHEN %(lease_only)s THEN 'force_generic_plan' ELSE current_setting('plan_cache_mode') END, true);
            SELECT 1 FROM {user} u WHERE u.id = %(reviewer)s FOR UPDATE;
            SELECT a.id, a.expires_at FROM {assignment} a WHERE a.reviewer_id = %(reviewer)s AND a.status = '{active}'
            ORDER BY a.created_at DESC;
            SELECT b.id, b.priority, c.gold_rate, c.seed
            FROM {batch} b LEFT JOIN {config} c ON c.id = 1 WHERE NOT b.paused""",
        # The guideline current when the lease starts rides along (one rule: guideline_current_sql), and the id of the
        # lease to be (so that the lease's row can travel with the item's move: writes_deferred).
        "candidate": f"""
            SELECT c.*, {guideline_columns}, {next_id_sql(Assignment)} AS lease_id
            FROM ({secondary_branch} UNION ALL {primary_branch} LIMIT 1) c
            LEFT JOIN LATERAL ({guideline_current_sql(benchmark="c.benchmark", qa_type="c.qa_type", at="%(now)s")}) g
            ON true""",
        # Ends the expired leases on the slot (harmless if it turns out taken: they are over either way) and says
        # whether a live lease or a stored review holds it, in one round trip.
        "slot_claim": f"""
            WITH ended AS (
                UPDATE {assignment} SET status = '{released}', finished_at = %(now)s
                WHERE item_id = %(item)s AND stage = %(stage)s AND status = '{active}' AND expires_at <= %(now)s
            )
            SELECT EXISTS (
                SELECT 1 FROM {assignment} l WHERE l.item_id = %(item)s AND l.stage = %(stage)s
                AND ({live} OR l.status = '{submitted}'))""",
    }
    # Whitespace collapsed: psycopg caches its parse of a statement only up to 4 KiB, and "candidate" is longer
    # written out (no literal in these statements holds a run of spaces or a newline).
    return {name: " ".join(sql.split()) for name, sql in statements.items()}


# What the candidate statement reads: the item, and the guideline a lease of it records (not its author).
_ITEM_FIELDS = row_fields(QAItem)
_GUIDELINE_FIELDS = row_fields(GuidelineVersion, leave_out=["author"])
_PASSAGE_FIELDS = row_fields(SourcePassage, only=["id", "text"])


def _candidate(
    *, reviewer: User, batch_ids: list[int], qa_type: str, now: datetime, tried: list[int], start: int
) -> tuple[QAItem, str, GuidelineVersion | None, int] | None:
    """The first free item (row-locked) from the reviewer's point in the random cycle, the stage it is free for, the
    guideline a lease of it starting ``now`` records, and an id for that lease."""
    params: dict[str, Any] = {
        "batches": batch_ids,
        "qa_type": qa_type,
        "tried": tried,
        "reviewer": reviewer.pk,
        "now": now,
        "start": start,
    }
    # A plain cursor, not QAItem.objects.raw: the raw queryset works out its columns' fields and converters afresh on
    # every call, which cost more than the statement itself.
    with prepared_cursor() as cursor:  # planned once per connection: planning it cost more than running it
        cursor.execute(_sql()["candidate"], params)
        row = cursor.fetchone()
        # The item's columns come as the table orders them (``i.*`` keeps the statement short): read them by name.
        at = {column.name: n for n, column in enumerate(cursor.description or ())}
    if row is None:
        return None
    item = from_row(QAItem, _ITEM_FIELDS, [row[at[f.column]] for f in _ITEM_FIELDS])
    if item.passage_id is not None:
        # The excerpt rides along in the same statement; attach it as a deferred instance so item.passage works.
        item.passage = from_row(SourcePassage, _PASSAGE_FIELDS, [item.passage_id, row[at["passage_text"]]])
    guideline = None
    if row[at["guideline_id"]] is not None:
        values = [row[at[f"guideline_{f.column}"]] for f in _GUIDELINE_FIELDS]
        guideline = from_row(GuidelineVersion, _GUIDELINE_FIELDS, values)
    return item, row[at["queue_stage"]], guideline, row[at["lease_id"]]


def _take(*, reviewer: User, batch_ids: list[int], qa_type: str, now: datetime, start: int) -> Assignment | None:
    tried: list[int] = []
    for _ in range(_MAX_TRIES):
        # Race: 50 reviewers asking at once. FOR UPDATE SKIP LOCKED makes each request lock a different
        # candidate row instead of all queueing on (and then double-assigning) the first free item.
        found = _candidate(reviewer=reviewer, batch_ids=batch_ids, qa_type=qa_type, now=now, tried=tried, start=start)
        if found is None:
            return None
        item, stage, guideline, lease_id = found
        if not _slot_claim(item=item, stage=stage, now=now):
            tried.append(item.pk)
            continue
        assignment = Assignment(
            pk=lease_id,
            item=item,
            reviewer=reviewer,
            stage=stage,
            expires_at=now + timedelta(seconds=lease_seconds()),
            guideline=guideline,
        )
        insert_rows([assignment], returning=False)  # sent with the item's move (writes_deferred)
        if stage == Stage.PRIMARY:
            item_transition(
                item=item, action=Action.ASSIGN, actor=reviewer, note=f"assignment {assignment.pk}", row_locked=True
            )
        else:
            audit_record(actor=reviewer, obj=item, action="item_assign_secondary", after={"assignment": assignment.pk})
        assignment.item = item
        return assignment
    return None


def _slot_claim(*, item: QAItem, stage: str, now: datetime) -> bool:
    """Whether the freshly locked item's stage slot is free. Expired leases on the slot are ended on the way (the
    taker replaces them; if the slot turns out taken they are over anyway).

    The candidate query's NOT EXISTS ran on a snapshot taken before we held the row lock; another request may have
    committed a lease on this item in between, so the slot is re-checked with a fresh statement now that we hold it.
    ``item`` carries the row's latest version (a locking read returns it).
    """
    if stage == Stage.PRIMARY:
        if item.status == ItemStatus.IMPORTED:
            return True  # every primary lease moves the item out of "imported" in the same transaction
        if item.status != ItemStatus.IN_REVIEW:
            return False
    elif item.status != ItemStatus.IN_SECOND_REVIEW:
        return False
    with connection.cursor() as cursor:
        cursor.execute(_sql()["slot_claim"], {"item": item.pk, "stage": stage, "now": now})
        (taken,) = cursor.fetchone()
    return not taken


def _take_gold(*, reviewer: User, qa_type: str, now: datetime) -> Assignment | None:
    golds = gold_offerable(reviewer)
    if qa_type:
        golds = golds.filter(item__qa_type=qa_type)
    gold = golds.select_related("item").order_by("?").first()
    if gold is None:
        return None
    # Gold leases have no capacity limit: every reviewer may answer every gold item once.
    assignment = Assignment.objects.create(
        item=gold.item,
        reviewer=reviewer,
        stage=Stage.GOLD,
        expires_at=now + timedelta(seconds=lease_seconds()),
        guideline=guideline_of_new_lease(gold.item, now),
    )
    assignment.item = gold.item
    return assignment


def assignments_expire(*, now: datetime | None = None) -> int:
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


class GiveBackReason:
    """Why a reviewer gives an item back (kept in the audit entry; the item's other reviewers never see it)."""

    OUTSIDE_FIELD = "outside_field"
    CONFLICT_OF_INTEREST = "conflict_of_interest"
    OTHER = "other"
    CHOICES = [
        (OUTSIDE_FIELD, "Outside my field"),
        (CONFLICT_OF_INTEREST, "Conflict of interest"),
        (OTHER, "Other"),
    ]


def assignment_give_back(*, assignment_id: int, reviewer: User, reason: str, note: str = "") -> Assignment:
    """End ``reviewer``'s lease without a judgement (outside their field, a conflict of interest), so the queue hands
    the item to someone else.

    The lease ends as an expired one does (``assignments_expire``: released, and a primary item back to the queue),
    and its row stays: the queue never hands an item twice to a person, so it never comes back to them. Every stage
    is given back the same way, with the same audit entry and answer, so a gold lease given back looks exactly like
    a real one given back."""
    if reason not in dict(GiveBackReason.CHOICES):
        raise DomainError("choose why you give the item back", code="invalid_reason")
    now = timezone.now()
    with transaction.atomic():
        assignment = Assignment.objects.select_for_update().select_related("item").filter(pk=assignment_id).first()
        if assignment is None or assignment.reviewer_id != reviewer.pk:
            raise NotAllowed("This is not your assignment.")
        if assignment.status != Assignment.Status.ACTIVE:
            raise Conflict("Your lease on this item has already ended; take the next item.", code="lease_ended")
        assignment.status, assignment.finished_at = Assignment.Status.RELEASED, now
        assignment.save(update_fields=["status", "finished_at"])
        audit_record(
            actor=reviewer,
            obj=assignment,
            action="assignment_given_back",
            before={"status": "active"},
            after={"status": "released", "reason": reason, "note": note.strip()},
        )
        item = assignment.item
        if assignment.stage == Stage.PRIMARY and item.status == ItemStatus.IN_REVIEW:
            item_transition(item=item, action=Action.RELEASE, actor=reviewer, note=f"lease {assignment.pk} given back")
    return assignment
