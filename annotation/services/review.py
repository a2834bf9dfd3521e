"""Submitting a review: idempotent per assignment, routes the item on through the status machine."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any
from uuid import UUID

from django.db import OperationalError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from annotation.models import Assignment, GoldAnswer, QAItem, Review, ReviewDraft, ReviewRevision, VettingConfig
from annotation.second_review import Choice
from annotation.selectors.reliability import second_review_choice
from annotation.services.transitions import (
    Move,
    item_from_lock_row,
    item_lock,
    item_lock_sql,
    item_moves,
    item_transition,
)
from annotation.workflow import (
    RELEVANCE_MAX,
    RELEVANCE_MIN,
    RELEVANCE_RANGE_TEXT,
    Action,
    CannotTellReason,
    ItemStatus,
    Stage,
    Verdict,
    cannot_tell_reason_problem,
    counts_as_judgement,
    route_after_primary,
    route_after_secondary,
)
from portal.audit import audit_batch, audit_record
from portal.bulk import (
    columns_sql,
    delete_where,
    from_row,
    insert_rows,
    next_id_sql,
    row_fields,
    update_row,
    writes_deferred,
)
from portal.errors import Conflict, DomainError, NotAllowed
from portal.models import User

_STAGE_STATUS: dict[str, ItemStatus] = {
    Stage.PRIMARY: ItemStatus.IN_REVIEW,
    Stage.SECONDARY: ItemStatus.IN_SECOND_REVIEW,
}


def review_validate(*, verdict: str, relevance: Any) -> int:
    """Check a verdict and a 1-5 relevance; returns the relevance as an int."""
    if verdict not in Verdict.values:
        raise DomainError(f"verdict must be one of {', '.join(Verdict.values)}", code="invalid_verdict")
    try:
        value = int(relevance)
    except (TypeError, ValueError):
        raise DomainError(f"GP relevance must be {RELEVANCE_RANGE_TEXT}", code="invalid_relevance") from None
    if not RELEVANCE_MIN <= value <= RELEVANCE_MAX:
        raise DomainError(f"GP relevance must be {RELEVANCE_RANGE_TEXT}", code="invalid_relevance")
    return value


def cannot_tell_reason_check(*, verdict: str, reason: str | None) -> str:
    """Check why a reviewer cannot tell against their verdict (``annotation.workflow.cannot_tell_reason_problem``);
    returns the reason ("" with any other verdict)."""
    reason = reason or ""
    problem = cannot_tell_reason_problem(verdict=verdict, reason=reason)
    if problem:
        raise DomainError(problem, code="invalid_cannot_tell_reason")
    return reason


def lease_end_status(*, stage: str, reason: str) -> str:
    """How a lease ends with its review: submitted, or superseded when the review judges nothing (outside the
    reviewer's field), which frees the stage's slot for someone else. A gold answer never touches its item."""
    if stage == Stage.GOLD or counts_as_judgement(reason):
        return Assignment.Status.SUBMITTED
    return Assignment.Status.SUPERSEDED


# The lease states that hold the lease's review (a repeated POST returns it).
_ANSWERED = (Assignment.Status.SUBMITTED, Assignment.Status.SUPERSEDED)

_ASSIGNMENT_FIELDS = row_fields(Assignment)


@cache
def _assignment_lock_sql() -> str:
    columns = columns_sql(_ASSIGNMENT_FIELDS)
    return f"SELECT {columns} FROM {Assignment._meta.db_table} WHERE id = %(assignment)s FOR UPDATE"


def assignment_lock_own(*, assignment_id: int, reviewer: User, idempotency_key: str | UUID | None) -> Assignment:
    """Lock the reviewer's own assignment; refuse someone else's and a form from another lease."""
    with connection.cursor() as cursor:  # a plain cursor: this runs on every review (see transitions.item_lock)
        cursor.execute(_assignment_lock_sql(), {"assignment": assignment_id})
        row = cursor.fetchone()
    return _own(row, reviewer=reviewer, idempotency_key=idempotency_key)


def _own(row: Sequence[Any] | None, *, reviewer: User, idempotency_key: str | UUID | None) -> Assignment:
    """The assignment of a row of ``_assignment_lock_sql()``, if it is the reviewer's and the key is its lease's."""
    assignment = None if row is None else from_row(Assignment, _ASSIGNMENT_FIELDS, row)
    if assignment is None or assignment.reviewer_id != reviewer.pk:
        raise NotAllowed("This is not your assignment.")
    try:
        key = uuid.UUID(str(idempotency_key))
    except ValueError:
        raise DomainError("missing or malformed idempotency key", code="invalid_key") from None
    if key != assignment.idempotency_key:
        raise Conflict("This form belongs to another lease of the item; reload the page.", code="stale_key")
    return assignment


@cache
def _submit_reads_sql() -> str:
    """What a review reads, in one round trip: the lease (locked); its item (locked, in that order, as every path
    locks them) unless the lease is someone else's, a gold item's or run out (a late review locks its item without
    waiting: ``_late_item_lock``); a new review id; the vetting settings."""
    table = Assignment._meta.db_table
    own_item = f"""(SELECT a.item_id FROM {table} a WHERE a.id = %(assignment)s AND a.reviewer_id = %(reviewer)s
        AND a.stage <> '{Stage.GOLD.value}' AND a.expires_at >= %(now)s)"""
    return ";\n".join(
        [
            _assignment_lock_sql(),
            item_lock_sql(own_item),
            f"SELECT {next_id_sql(Review)}",
            VettingConfig.load_sql(),
        ]
    )


def _submit_reads(
    *, assignment_id: int, reviewer: User, idempotency_key: str | UUID | None, now: datetime
) -> tuple[Assignment, QAItem | None, int, VettingConfig]:
    with connection.cursor() as cursor:
        params: dict[str, Any] = {"assignment": assignment_id, "reviewer": reviewer.pk, "now": now}
        cursor.execute(_submit_reads_sql(), params)
        lease = cursor.fetchone()
        cursor.nextset()
        item = cursor.fetchone()
        cursor.nextset()
        (review_id,) = cursor.fetchone()
        cursor.nextset()
        config = cursor.fetchone()
    assignment = _own(lease, reviewer=reviewer, idempotency_key=idempotency_key)
    return assignment, (item_from_lock_row(item) if item else None), review_id, VettingConfig.from_load_row(config)


class ReviewAlreadySent(Conflict):
    """A different review sent on a lease that already has one (from a second tab, or a form changed and sent
    again): nothing was changed. Carries what is stored (a review or a gold answer, which read the same), so that
    the page and the API can show it next to what was sent."""

    code = "already_reviewed"

    def __init__(self, stored: Review | GoldAnswer):
        self.stored = stored
        comment = f"comment “{stored.comment}”" if stored.comment else "no comment"
        verdict = Verdict(stored.verdict).label
        if stored.cannot_tell_reason:
            verdict += f" ({CannotTellReason(stored.cannot_tell_reason).label.lower()})"
        super().__init__(
            f"You had already sent a review of this item: {verdict}, GP relevance "
            f"{stored.relevance}, {comment}. The different review you sent now was not saved."
        )


def _same_review(stored: Review | GoldAnswer, *, verdict: str, reason: str, relevance: int, comment: str) -> bool:
    """Whether a review sent again on an answered lease is the one stored: a retry or a double click, not a change.
    A review its author has changed since also matches what they first sent (a retry of the first request)."""
    sent = (verdict, reason, relevance, comment.strip())
    if (stored.verdict, stored.cannot_tell_reason, stored.relevance, stored.comment) == sent:
        return True
    if isinstance(stored, GoldAnswer) or stored.edited_at is None:
        return False
    first = ReviewRevision.objects.filter(review=stored, version=1)
    return first.values_list("verdict", "cannot_tell_reason", "relevance", "comment").first() == sent


def review_submit(
    *,
    assignment_id: int,
    reviewer: User,
    idempotency_key: str | UUID | None,
    verdict: str,
    relevance: Any,
    comment: str = "",
    cannot_tell_reason: str = "",
    active_seconds: float | None = None,
    now: datetime | None = None,
) -> Review | GoldAnswer:
    """Store the reviewer's verdict for their lease, once: the same review sent again returns the stored one
    unchanged (a double click, a retry); a different one raises :class:`ReviewAlreadySent` and changes nothing.

    Primary review: the item is drawn (or not) for second review from the organizer's seed; if not drawn, the
    primary review is final. Secondary review: agreement finalises, disagreement goes to adjudication.
    "Cannot tell" needs its reason (refused otherwise, and a reason with another verdict); "outside my field" is
    stored set aside and sends the item back to the queue for the same stage (``workflow.counts_as_judgement``).
    Gold leases store a :class:`GoldAnswer` and never touch the item.
    """
    relevance = review_validate(verdict=verdict, relevance=relevance)
    reason = cannot_tell_reason_check(verdict=verdict, reason=cannot_tell_reason)
    now = now or timezone.now()
    if active_seconds is not None:
        active_seconds = max(0.0, min(float(active_seconds), 24 * 3600.0))
    # Hot path: the writes nothing reads back (the lease's end, the draft, the item's move, the three audit entries)
    # travel in one round trip when the block ends.
    with transaction.atomic(), writes_deferred(), audit_batch():
        assignment, locked_item, review_id, config = _submit_reads(
            assignment_id=assignment_id, reviewer=reviewer, idempotency_key=idempotency_key, now=now
        )
        if assignment.status in _ANSWERED:
            existing = GoldAnswer if assignment.stage == Stage.GOLD else Review
            stored = existing.objects.get(assignment=assignment)
            if not _same_review(stored, verdict=verdict, reason=reason, relevance=relevance, comment=comment):
                raise ReviewAlreadySent(stored)  # a second tab, or a form sent again after a change: not a retry
            return stored  # a retried or double POST: stored once
        late = now > assignment.expires_at
        if assignment.status != Assignment.Status.ACTIVE and not (late and _ran_out(assignment)):
            raise Conflict("Your lease on this item has ended; take the next item.", code="lease_ended")
        fields = {
            "verdict": verdict,
            "cannot_tell_reason": reason,
            "relevance": relevance,
            "comment": comment.strip(),
            "server_seconds": (now - assignment.created_at).total_seconds(),
            "active_seconds": active_seconds,
            "guideline_id": assignment.guideline_id,  # recorded when the lease was handed out (guideline_for_assignment)
        }
        assignment.status, assignment.finished_at = lease_end_status(stage=assignment.stage, reason=reason), now
        update_row(Assignment, assignment.pk, {"status": assignment.status, "finished_at": now})
        delete_where(ReviewDraft, reviewer_id=reviewer.pk, item_id=assignment.item_id)  # the draft became this
        if assignment.stage == Stage.GOLD:
            gold = assignment.item.gold
            answer = GoldAnswer.objects.create(
                assignment=assignment,
                gold=gold,
                reviewer=reviewer,
                is_correct=verdict == gold.expected_verdict,
                **fields,
            )
            audit_record(actor=reviewer, obj=answer, action="gold_answer_created", after={"verdict": verdict})
            return answer
        if late:
            item = _late_item_lock(assignment)
            _late_slot_check(assignment=assignment, item=item, now=now)
        else:
            item = locked_item or item_lock(assignment.item_id)
            if item.status != _STAGE_STATUS[assignment.stage]:
                raise Conflict(
                    f"The item is now {item.get_status_display().lower()}; your review was not stored.",
                    code="item_moved",
                )
        # A review outside its author's field is set aside the moment it is stored: it frees the stage's slot.
        set_aside = None if counts_as_judgement(reason) else now
        review = Review(
            pk=review_id,
            assignment=assignment,
            item=item,
            reviewer=reviewer,
            stage=assignment.stage,
            superseded_at=set_aside,
            **fields,
        )
        insert_rows([review], returning=False)  # its id was taken with the reads: the insert waits for the batch
        after = {"item": item.uid, "stage": review.stage, "verdict": verdict, "relevance": relevance}
        if reason:
            after["cannot_tell_reason"] = reason
        if late:
            after["late_seconds"] = round((now - assignment.expires_at).total_seconds())
        audit_record(actor=reviewer, obj=review, action="review_created", after=after)
        _route(item=item, review=review, actor=reviewer, config=config)
    return review


# Late reviews. A review sent after its 30-minute hold ran out is stored when nobody else has taken the item for that
# stage meanwhile and the item still waits for that review: the reviewer's work counts, and the unique constraints
# still allow one review per stage. The hold's end stays on the lease (``expires_at``) next to the time the review
# arrived (``finished_at``, the review's ``created_at``), and adjudicators see the review marked late. Otherwise the
# review is refused with the reason; the page shows the form again with what the reviewer wrote.


def _ran_out(assignment: Assignment) -> bool:
    """A lease ended only because its time ran out (by the sweeper, by its holder taking another item, or by someone
    else taking the slot), not because its holder filed a dispute or a feedback note instead of a review."""
    return not (assignment.disputes.exists() or assignment.feedback.exists())


def _late_refusal(assignment: Assignment, why: str) -> Conflict:
    minutes = round((assignment.expires_at - assignment.created_at).total_seconds() / 60)
    return Conflict(
        f"Your {minutes}-minute hold on this item ran out at {assignment.expires_at:%H:%M} UTC and {why}, so your "
        "review was not stored. What you wrote is still in the form; take the next item when you are ready.",
        code="lease_expired",
    )


def _late_item_lock(assignment: Assignment) -> QAItem:
    """Lock the item of a late review without waiting.

    Race: a "next" that takes over this very slot holds the item row and then ends this expired lease, whose row we
    already hold; waiting for the item here would deadlock (PostgreSQL would abort one of the two with an error).
    The late review gives way instead: the item is being handed out again at this moment."""
    try:
        return item_lock(assignment.item_id, nowait=True)
    except OperationalError:
        raise _late_refusal(assignment, "the item is being handed to another reviewer at this moment") from None


def _late_slot_check(*, assignment: Assignment, item: QAItem, now: datetime) -> None:
    """Take the stage slot back for a late review, or refuse. The item row is locked: the queue skips locked items,
    so nobody can be handed the item while this runs."""
    others = Assignment.objects.filter(item=item, stage=assignment.stage).exclude(pk=assignment.pk)
    if others.filter(Q(status=Assignment.Status.SUBMITTED) | Q(status=Assignment.Status.ACTIVE, expires_at__gt=now)):
        raise _late_refusal(assignment, "another reviewer has taken the item since")
    expected = _STAGE_STATUS[assignment.stage]
    if assignment.stage == Stage.PRIMARY and item.status == ItemStatus.IMPORTED:
        # The sweeper put the item back in the queue; nobody took it, so the late lease takes it again.
        item_transition(
            item=item, action=Action.ASSIGN, actor=assignment.reviewer, note=f"late review on assignment {assignment.pk}",
            row_locked=True,
        )  # fmt: skip
    elif item.status != expected:
        raise _late_refusal(assignment, f"the item has moved on (it is now {item.get_status_display().lower()})")


def _route(*, item: QAItem, review: Review, actor: User, config: VettingConfig) -> None:
    """Move the item on after a review: stored, then routed, in one write with an audit entry per move."""
    reason = review.cannot_tell_reason
    if review.stage == Stage.PRIMARY:
        # An item back in the queue is drawn again at its next first review (as one sent back by an organizer).
        choice = (
            second_review_choice(item=item, reviewer_id=review.reviewer_id, verdict=review.verdict, config=config)
            if counts_as_judgement(reason)
            else Choice(False)
        )
        route = route_after_primary(
            verdict=review.verdict, relevance=review.relevance, selected=choice.second_review, reason=reason,
            straight_to_adjudication=choice.straight_to_adjudication,
        )  # fmt: skip
        fields = {"second_review": choice.second_review, "second_review_reason": choice.reason}
        moves = [
            Move("submit_primary", note=f"review {review.pk}", fields=fields),
            Move(route.action, note=f"seed {config.seed}", route=route),
        ]
    else:
        routes = route_after_secondary(
            first=_first_judgement(item.pk),
            second=(review.verdict, review.relevance),
            relevance_gap=config.relevance_gap,
            reason=reason,
        )
        moves = [Move(route.action, note=f"review {review.pk}", route=route) for route in routes]
    item_moves(item=item, moves=moves, actor=actor, row_locked=True)


@cache
def _first_judgement_sql() -> str:
    return (
        f"SELECT verdict, relevance FROM {Review._meta.db_table} "
        f"WHERE item_id = %s AND stage = '{Stage.PRIMARY.value}' AND superseded_at IS NULL"
    )


def _first_judgement(item_id: int) -> tuple[str, int]:
    """The verdict and relevance of the item's standing primary review (a plain cursor: runs on every second review)."""
    with connection.cursor() as cursor:
        cursor.execute(_first_judgement_sql(), [item_id])
        rows = cursor.fetchall()
    if len(rows) != 1:
        raise Review.DoesNotExist(f"item {item_id} has {len(rows)} standing primary reviews, not one")
    return rows[0]
