"""Read-side queries of the vetting workflow (pages and API call these; releases read the open-issue filter)."""

from __future__ import annotations

import statistics
from datetime import timedelta
from functools import cache

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Avg, Count, Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from annotation.models import (
    Adjudication,
    Assignment,
    Dispute,
    FeedbackNote,
    GoldAnswer,
    GoldItem,
    ImportBatch,
    QAItem,
    Review,
    VettingConfig,
)
from annotation.workflow import ItemStatus, Stage, Verdict
from portal.audit import audit_history
from portal.errors import NotAllowed, NotFound
from portal.roles import Role, can_adjudicate, can_organize

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


def open_issue_q(prefix: str = "") -> Q:
    """``Q`` true for items with an open dispute or feedback note (``prefix`` for related lookups)."""
    disputes = Dispute.objects.filter(item=OuterRef(f"{prefix}pk"), status=Dispute.Status.OPEN)
    notes = FeedbackNote.objects.filter(item=OuterRef(f"{prefix}pk"), status=FeedbackNote.Status.OPEN)
    return Q(Exists(disputes)) | Q(Exists(notes))


def item_has_open_issue(item: QAItem) -> bool:
    """True while the item has an open dispute or open feedback note (it is then held, never released)."""
    return (
        Dispute.objects.filter(item=item, status=Dispute.Status.OPEN).exists()
        or FeedbackNote.objects.filter(item=item, status=FeedbackNote.Status.OPEN).exists()
    )


def items_without_open_issue(items: QuerySet[QAItem] | None = None) -> QuerySet[QAItem]:
    return (items if items is not None else QAItem.objects.all()).exclude(open_issue_q())


def items_release_eligible(*, relevance: float = 5) -> QuerySet[QAItem]:
    """The default release selection: verified, final verdict correct, final GP relevance ``relevance`` (5),
    no open feedback or dispute, not a gold item."""
    items = QAItem.objects.filter(
        status=ItemStatus.VERIFIED, final_verdict=Verdict.CORRECT, final_relevance=relevance, gold__isnull=True
    )
    return items_without_open_issue(items)


def reviews_visible_to(user, item: QAItem) -> QuerySet[Review]:
    """Blinding: reviewers see only their own review of an item; adjudicators and organizers see all, except on
    items they are conflicted on (then only their own, like any reviewer)."""
    reviews = Review.objects.filter(item=item).select_related("reviewer", "assignment")
    if (can_adjudicate(user) or can_organize(user)) and not has_conflict_of_interest(user, item):
        return reviews
    return reviews.filter(reviewer=user)


def disputes_visible_to(user) -> QuerySet[Dispute]:
    """Reviewers: their own disputes. Adjudicators and organizers: all, except disputes by others on items they are
    conflicted on."""
    disputes = Dispute.objects.select_related("item", "raised_by", "resolver").prefetch_related("comments__author")
    if can_adjudicate(user) or can_organize(user):
        return disputes.filter(Q(raised_by=user) | ~conflict_of_interest_q(user, prefix="item__"))
    return disputes.filter(raised_by=user)


def dispute_for(user, pk: int) -> Dispute:
    """One dispute for its page / endpoint: 404 if it does not exist or is someone else's (for a reviewer), 403 with
    the reason when an adjudicator or organizer is conflicted on its item."""
    dispute = disputes_visible_to(user).filter(pk=pk).first()
    if dispute is not None:
        return dispute
    hidden = Dispute.objects.select_related("item").filter(pk=pk).first()
    if hidden is not None and (can_adjudicate(user) or can_organize(user)):
        conflict_of_interest_refuse(user, hidden.item)
    raise NotFound("No such dispute.")


def _adjudication_waiting() -> QuerySet[QAItem]:
    return QAItem.objects.filter(Q(status=ItemStatus.IN_ADJUDICATION) | (Q(status=ItemStatus.HELD) & open_issue_q()))


def adjudication_queue(*, user) -> QuerySet[QAItem]:
    """Items ``user`` should decide: disagreements / unclear items, and held items with open issues, less the items
    ``user`` is conflicted on (other adjudicators still get those). An organizer who is not an adjudicator gets the
    items no adjudicator may decide (``annotation.services.adjudication.decider_check``)."""
    waiting = _adjudication_waiting() if can_adjudicate(user) else adjudication_blocked()
    if not (can_adjudicate(user) or can_organize(user)):
        waiting = waiting.none()
    return (
        waiting.exclude(conflict_of_interest_q(user))
        .annotate(
            open_disputes=Count("disputes", filter=Q(disputes__status=Dispute.Status.OPEN), distinct=True),
            open_feedback=Count(
                "feedback_notes", filter=Q(feedback_notes__status=FeedbackNote.Status.OPEN), distinct=True
            ),
        )
        .select_related("batch")
        .order_by("-batch__priority", "id")
    )


def adjudication_blocked() -> QuerySet[QAItem]:
    """Items waiting for adjudication that no adjudicator may decide (every adjudicator is conflicted on them, or
    there is none): shown to organizers, who give the adjudicator role to someone who has not reviewed them."""
    adjudicators = get_user_model().objects.filter(groups__name=Role.ADJUDICATOR, is_active=True)
    # An adjudicator (outer reference) with no lease on the waiting item (the reference one level further out).
    free = adjudicators.exclude(Exists(_leases_of(OuterRef("pk")).filter(item=OuterRef(OuterRef("pk")))))
    return _adjudication_waiting().exclude(Exists(free)).order_by("id")


def feedback_notes_of(user) -> QuerySet[FeedbackNote]:
    """The person's own feedback notes, newest first, with what became of them (open, or closed with a response)."""
    return FeedbackNote.objects.filter(author=user).select_related("item").order_by("-created_at")


def item_adjudication_blocked(item: QAItem) -> bool:
    """True while ``item`` waits for a decision that no adjudicator may make (see :func:`adjudication_blocked`)."""
    return adjudication_blocked().filter(pk=item.pk).exists()


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


def _count_map(rows, key: str) -> dict:
    out: dict = {}
    for row in rows:
        out.setdefault(row[key], {})[row["status"]] = row["n"]
    return out


def dispute_resolution_hours() -> dict:
    resolved = Dispute.objects.exclude(resolved_at=None).annotate(took=F("resolved_at") - F("created_at"))
    hours = [r.took.total_seconds() / 3600 for r in resolved.only("created_at", "resolved_at")]
    return {
        "resolved": len(hours),
        "mean_hours": round(statistics.fmean(hours), 2) if hours else None,
        "median_hours": round(statistics.median(hours), 2) if hours else None,
    }


def reviewer_quality() -> list[dict]:
    """Per reviewer: real reviews, gold accuracy (flagged below the threshold), adjudication overturn rate."""
    config = VettingConfig.load()
    people: dict[int, dict] = {}

    def row(pk, email):
        return people.setdefault(
            pk,
            {
                "reviewer_id": pk,
                "email": email,
                "reviews": 0,
                "primary": 0,
                "secondary": 0,
                "gold_answers": 0,
                "gold_correct": 0,
                "adjudicated": 0,
                "overturned": 0,
            },
        )

    for r in Review.objects.values("reviewer_id", "reviewer__email", "stage").annotate(n=Count("id")):
        entry = row(r["reviewer_id"], r["reviewer__email"])
        entry["reviews"] += r["n"]
        entry[r["stage"]] += r["n"]
    for g in GoldAnswer.objects.values("reviewer_id", "reviewer__email").annotate(
        n=Count("id"), ok=Count("id", filter=Q(is_correct=True))
    ):
        entry = row(g["reviewer_id"], g["reviewer__email"])
        entry["gold_answers"], entry["gold_correct"] = g["n"], g["ok"]
    adjudicated = Review.objects.filter(item__final_source="adjudication")
    for a in adjudicated.values("reviewer_id", "reviewer__email").annotate(
        n=Count("id"), over=Count("id", filter=~Q(verdict=F("item__final_verdict")))
    ):
        entry = row(a["reviewer_id"], a["reviewer__email"])
        entry["adjudicated"], entry["overturned"] = a["n"], a["over"]
    for entry in people.values():
        answers = entry["gold_answers"]
        entry["gold_accuracy"] = round(entry["gold_correct"] / answers, 3) if answers else None
        entry["flagged"] = answers >= config.gold_min_answers and entry["gold_accuracy"] < config.gold_min_accuracy
        entry["overturn_rate"] = round(entry["overturned"] / entry["adjudicated"], 3) if entry["adjudicated"] else None
    return sorted(people.values(), key=lambda e: e["email"])


def vetting_progress() -> dict:
    """Organizer overview: items by status per batch and type, work per stage, double-review share, issues."""
    now = timezone.now()
    statuses = [s.value for s in ItemStatus]
    real = QAItem.objects.filter(gold__isnull=True)
    by_batch = _count_map(real.values("batch_id", "status").annotate(n=Count("id")), "batch_id")
    batches = [
        {
            "id": b.pk,
            "name": b.name,
            "paused": b.paused,
            "priority": b.priority,
            "counts": by_batch.get(b.pk, {}),
            "total": sum(by_batch.get(b.pk, {}).values()),
            "cells": [by_batch.get(b.pk, {}).get(s, 0) for s in statuses],
        }
        for b in ImportBatch.objects.order_by("-priority", "-created_at")
    ]
    by_type = _count_map(real.values("qa_type", "status").annotate(n=Count("id")), "qa_type")
    primary_done = Review.objects.filter(stage=Stage.PRIMARY).count()
    drawn = real.filter(second_review=True).count()
    return {
        "statuses": statuses,
        "batches": batches,
        "types": [
            {"qa_type": t, "counts": c, "total": sum(c.values()), "cells": [c.get(s, 0) for s in statuses]}
            for t, c in sorted(by_type.items())
        ],
        "stages": {
            "primary_reviews": primary_done,
            "secondary_reviews": Review.objects.filter(stage=Stage.SECONDARY).count(),
            "adjudications": Adjudication.objects.count(),
            "live_leases": Assignment.objects.filter(status=Assignment.Status.ACTIVE, expires_at__gt=now).count(),
        },
        "double_review_share": round(drawn / primary_done, 3) if primary_done else None,
        "second_share_target": VettingConfig.load().second_share,
        "open_disputes": Dispute.objects.filter(status=Dispute.Status.OPEN).count(),
        "adjudication_blocked": list(adjudication_blocked().values_list("uid", flat=True)[:50]),
        # of those, the ones held for an open issue: decided, never sent back to review
        "adjudication_blocked_held": list(
            adjudication_blocked().filter(status=ItemStatus.HELD).values_list("uid", flat=True)[:50]
        ),
        "open_feedback": FeedbackNote.objects.filter(status=FeedbackNote.Status.OPEN).count(),
        "dispute_resolution": dispute_resolution_hours(),
        "people": reviewer_quality(),
        "avg_review_seconds": Review.objects.aggregate(v=Avg("server_seconds"))["v"],
    }


# --- the adjudication page: the reviews compared, and the item's story in words ---------------------------------


def review_comparison(reviews, *, relevance_gap: int | None = None) -> list[dict]:
    """The current (not superseded) reviews side by side, one row per field, each row saying whether they differ.

    Verdict and GP relevance are compared (relevance differs when the ratings are not equal; its ``note`` says how
    far apart they are and whether that alone needs adjudication); comments are shown side by side, never marked
    (free text always differs). Empty with fewer than two current reviews."""
    current = [r for r in reviews if r.superseded_at is None]
    if len(current) < 2:
        return []
    gap = relevance_gap if relevance_gap is not None else VettingConfig.load().relevance_gap
    verdicts = [r.get_verdict_display() for r in current]
    ratings = [r.relevance for r in current]
    spread = max(ratings) - min(ratings)
    return [
        {"field": "Verdict", "key": "verdict", "values": verdicts, "differs": len({r.verdict for r in current}) > 1},
        {
            "field": "GP relevance",
            "key": "relevance",
            "values": [str(v) for v in ratings],
            "differs": spread > 0,
            "note": f"{spread} apart" + (f" (a gap of {gap} or more needs adjudication)" if spread >= gap else "")
            if spread
            else "",
        },
        {"field": "Comment", "key": "comment", "values": [r.comment or "—" for r in current], "differs": False},
    ]


def item_story(user, item: QAItem, *, with_gold: bool = False) -> list[dict]:
    """The item's history as people tell it, oldest first: ``{"at", "what", "who", "detail"}`` per event.

    Built from the records themselves (reviews visible to ``user``, disputes, feedback notes, decisions, returns to
    review), not from the audit log. The gold marking only with ``with_gold`` and only for organizers (the
    organizers' item page; the adjudication page never shows it). Callers have refused people conflicted on the
    item already (:func:`item_unblinded_for`); the reviews go through :func:`reviews_visible_to` all the same."""
    events: list[dict] = [{"at": item.created_at, "what": "Imported", "who": "", "detail": ""}]
    if with_gold and can_organize(user):
        events += _gold_events(item)
    stage_names = {Stage.PRIMARY: "First review", Stage.SECONDARY: "Second review"}
    for r in reviews_visible_to(user, item):
        detail = f"{r.get_verdict_display()}, GP relevance {r.relevance}"
        if r.superseded_at:
            detail += " (set aside when the item went back to review)"
        events.append(
            {"at": r.created_at, "what": stage_names.get(r.stage, "Review"), "who": r.reviewer, "detail": detail}
        )
        if r.edited_at:  # the detail above is the changed version; the earlier ones are on the review's own page
            what = f"{stage_names.get(r.stage, 'Review')} changed by its author"
            events.append({"at": r.edited_at, "what": what, "who": r.reviewer, "detail": ""})
    for d in item.disputes.select_related("raised_by", "resolver"):
        events.append(
            {"at": d.created_at, "what": "Dispute opened", "who": d.raised_by, "detail": d.get_category_display()}
        )
        if d.resolved_at:
            events.append(
                {"at": d.resolved_at, "what": f"Dispute {d.status}", "who": d.resolver, "detail": d.resolution_note}
            )
    for n in item.feedback_notes.select_related("author", "closed_by"):
        events.append({"at": n.created_at, "what": "Feedback note", "who": n.author, "detail": n.text})
        if n.closed_at:
            events.append({"at": n.closed_at, "what": "Feedback closed", "who": n.closed_by, "detail": n.response})
    for a in item.adjudications.select_related("adjudicator"):
        detail = f"{a.get_verdict_display()}, GP relevance {a.relevance}: {a.reason}"
        events.append({"at": a.created_at, "what": "Decided", "who": a.adjudicator, "detail": detail})
    for entry in audit_history(item).filter(action="item_reassigned"):
        reason = (entry.after or {}).get("reason", "")
        events.append({"at": entry.at, "what": "Sent back to review", "who": entry.actor, "detail": reason})
    return sorted(events, key=lambda e: e["at"])


def _gold_events(item: QAItem) -> list[dict]:
    """The gold marking in words: made gold (with the expected verdict), changed, withdrawn."""
    gold = GoldItem.objects.filter(item=item).select_related("created_by").first()
    if gold is None:
        return []
    detail = f"expected verdict {gold.get_expected_verdict_display()}"
    if gold.planted_error:
        detail += ", a planted error"
    events = [{"at": gold.created_at, "what": "Made a gold item", "who": gold.created_by, "detail": detail}]
    words = {"gold_updated": "Gold item changed", "gold_deactivated": "Gold item withdrawn"}
    for entry in audit_history(item).filter(action__in=list(words)):
        events.append({"at": entry.at, "what": words[entry.action], "who": entry.actor, "detail": ""})
    return events
