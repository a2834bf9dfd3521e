"""Read side of one reviewer's work, and the conflict-of-interest rule that every page, API endpoint and service
uses: who may see an item's other reviews, a reviewer's own progress and pace."""

from __future__ import annotations

from datetime import timedelta
from functools import cache

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from annotation.models import Assignment, Dispute, GoldAnswer, QAItem, Review
from annotation.workflow import CannotTellReason, Stage
from portal.errors import NotAllowed, NotFound
from portal.roles import can_adjudicate, can_organize

#: A review that judges its item: every review but one whose author could not tell because the item is outside their
#: field (``annotation.workflow.counts_as_judgement``); that one is work of theirs, not a reading of the item, and
#: counts in no figure (agreement, progress, double reviews, the reliability model).
JUDGING_REVIEW = ~Q(cannot_tell_reason=CannotTellReason.OUTSIDE_FIELD)


def judging_reviews() -> QuerySet[Review]:
    """The first and second reviews that judge their items (:data:`JUDGING_REVIEW`)."""
    return Review.objects.filter(JUDGING_REVIEW, stage__in=[Stage.PRIMARY, Stage.SECONDARY])


CONFLICT_OF_INTEREST = (
    "You were given item {uid} to review, so you may not see its other reviews, its history or its disputes, "
    "nor decide it or close its issues: someone who has not reviewed it will."
)
# Audit actions that say an item is gold and what its expected verdict is: for organizers only.


# --- conflict of interest: one rule, used by every page, API endpoint and service below ----------------------


def _leases_of(user) -> QuerySet[Assignment]:
    """The rule: a person is conflicted on every item they were ever given to review (any stage, gold included,
    whether the lease is live, ran out, ended in a dispute or produced a review).

    Not only live leases: a hold that ran out can still turn into a review (late reviews are accepted, see
    ``annotation.services.review``), and whoever has looked at the item to judge it must not judge it again as
    adjudicator nor read the other judgements first. Whatever other roles the person holds."""
    return Assignment.objects.filter(reviewer=user)


def conflict_of_interest_q(user, prefix: str = "") -> Q:
    """``Q`` true for items ``user`` is conflicted on (``prefix`` for related lookups, e.g. ``"item__"``)."""
    return Q(Exists(_leases_of(user).filter(item=OuterRef(f"{prefix}pk"))))


def has_conflict_of_interest(user, item: QAItem) -> bool:
    return _leases_of(user).filter(item=item).exists()


def conflict_of_interest_refuse(user, item: QAItem) -> None:
    """Raise :class:`NotAllowed` (403, with the reason) when ``user`` is conflicted on ``item``."""
    if has_conflict_of_interest(user, item):
        raise NotAllowed(CONFLICT_OF_INTEREST.format(uid=item.uid), code="conflict_of_interest")


def item_unblinded_for(user, uid: str) -> QAItem:
    """The item of a page / endpoint that shows its reviews, history or disputes (adjudication, the organizers' item
    page): 404 if there is none, 403 if ``user`` is conflicted on it."""
    item = QAItem.objects.select_related("passage", "batch").filter(uid=uid).first()
    if item is None:
        raise NotFound(f"No item with uid {uid}.")
    conflict_of_interest_refuse(user, item)
    return item


def reviews_visible_to(user, item: QAItem) -> QuerySet[Review]:
    """Blinding: reviewers see only their own review of an item; adjudicators and organizers see all, except on
    items they are conflicted on (then only their own, like any reviewer)."""
    reviews = Review.objects.filter(item=item).select_related("reviewer", "assignment")
    if (can_adjudicate(user) or can_organize(user)) and not has_conflict_of_interest(user, item):
        return reviews
    return reviews.filter(reviewer=user)


def reviewer_progress(user) -> dict:
    """The reviewer's own counts and pace (gold answers included: to the reviewer they are ordinary items).

    Shown on every review page, so it is one hand-written statement (one round trip, nothing to compile): counts
    over all / the last 24 h / the last 7 days, the median seconds of the most recent 500 reviews and 100 gold
    answers, and the person's open and resolved disputes."""
    now = timezone.now()
    params = {"user": user.pk, "day": now - timedelta(days=1), "week": now - timedelta(days=7)}
    with connection.cursor() as cursor:
        cursor.execute(_progress_sql(), params)
        total, last_24h, last_7d, median, disputes_open, disputes_resolved = cursor.fetchone()
    return {
        "total": total,
        "last_24h": last_24h,
        "last_7d": last_7d,
        "median_seconds": round(median, 1) if median is not None else None,
        "disputes_open": disputes_open,
        "disputes_resolved": disputes_resolved,
    }


@cache
def _progress_sql() -> str:
    review, gold, dispute = Review._meta.db_table, GoldAnswer._meta.db_table, Dispute._meta.db_table
    return f"""
        WITH r AS (SELECT created_at, server_seconds FROM {review} WHERE reviewer_id = %(user)s),
             g AS (SELECT created_at, server_seconds FROM {gold} WHERE reviewer_id = %(user)s),
             answers AS (SELECT created_at FROM r UNION ALL SELECT created_at FROM g)
        SELECT count(*),
               count(*) FILTER (WHERE created_at >= %(day)s),
               count(*) FILTER (WHERE created_at >= %(week)s),
               (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s) FROM (
                   (SELECT server_seconds AS s FROM r ORDER BY created_at DESC LIMIT 500)
                   UNION ALL (SELECT server_seconds FROM g ORDER BY created_at DESC LIMIT 100)) recent),
               (SELECT count(*) FROM {dispute} WHERE raised_by_id = %(user)s AND status = '{Dispute.Status.OPEN.value}'),
               (SELECT count(*) FROM {dispute} WHERE raised_by_id = %(user)s AND status <> '{Dispute.Status.OPEN.value}')
        FROM answers"""


# --- the adjudication page: the reviews compared, and the item's story in words ---------------------------------
