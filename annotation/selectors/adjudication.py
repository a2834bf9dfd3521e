"""Read side of adjudication: the queue (items waiting that a person may decide), the items no adjudicator may
decide, and the adjudication page's reviews compared and the item's story in words."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, Max, Min, OuterRef, Q, QuerySet

from annotation.models import Dispute, FeedbackNote, GoldItem, QAItem, VettingConfig
from annotation.second_review import Reason
from annotation.selectors.disputes import open_issue_q
from annotation.selectors.review import _leases_of, conflict_of_interest_q, item_unblinded_for, reviews_visible_to
from annotation.workflow import ItemStatus, Stage, Verdict
from portal.audit import audit_history
from portal.errors import NotAllowed
from portal.roles import Role, can_adjudicate, can_organize


def adjudication_waiting() -> QuerySet[QAItem]:
    """Every item waiting for an adjudicator's decision (disagreements and unclear items, and held items with an open
    issue), whoever may decide it: the queues and the organizers' "next steps" narrow it down."""
    return QAItem.objects.filter(Q(status=ItemStatus.IN_ADJUDICATION) | (Q(status=ItemStatus.HELD) & open_issue_q()))


NOT_WAITING = (
    "Item {uid} is not waiting for adjudication, so its reviews are not shown here: the adjudication page opens only "
    "while the reviewers disagree, could not tell from the source, or a dispute or feedback note on the item is open."
)


def item_for_adjudication(user, uid: str) -> QAItem:
    """The item of the adjudication page and API (reading, deciding, closing its issues): 404 if there is none, 403
    if ``user`` is conflicted on it (:func:`item_unblinded_for`), 403 unless it waits for a decision
    (:func:`adjudication_waiting`). Its reviews are un-blinded there, so an item still in review (a second review
    not yet written) is never opened: its first review would reach whoever might be its second reviewer."""
    item = item_unblinded_for(user, uid)
    if not adjudication_waiting().filter(pk=item.pk).exists():
        raise NotAllowed(NOT_WAITING.format(uid=item.uid), code="not_waiting_for_adjudication")
    return item


# Why an item waits in the adjudication queue, as the queue names it and filters by it (issue 45, F4). An item may
# wait for more than one reason (two reviews, one of them "cannot tell", and a dispute).
QUEUE_REASONS = {
    "disagreement": "The reviewers disagree",
    "cannot_tell": "A reviewer could not tell from the source",
    "likely_wrong": "The reliability model doubts the first verdict and sent it straight to an adjudicator",
    "dispute": "A dispute is open",
    "feedback": "A feedback note is open",
}


def _queue_reason_q(reason: str, relevance_gap: int) -> Q:
    """The queue's items waiting for ``reason`` (one of :data:`QUEUE_REASONS`), on :func:`adjudication_queue`'s
    annotations. The reviews' reasons hold only while the item is in adjudication (a held item waits for its issue)."""
    in_adjudication = Q(status=ItemStatus.IN_ADJUDICATION)
    return {
        "disagreement": in_adjudication & (Q(verdicts_given__gt=1) | Q(relevance_spread__gte=relevance_gap)),
        "cannot_tell": in_adjudication & Q(cannot_tell_reviews__gt=0),
        "likely_wrong": in_adjudication & Q(second_review_reason=Reason.ADJUDICATION),
        "dispute": Q(open_disputes__gt=0),
        "feedback": Q(open_feedback__gt=0),
    }[reason]


def adjudication_queue(*, user, reason: str = "") -> QuerySet[QAItem]:
    """Items ``user`` should decide: disagreements / unclear items, and held items with open issues, less the items
    ``user`` is conflicted on (other adjudicators still get those). An organizer who is not an adjudicator gets the
    items no adjudicator may decide (``annotation.services.adjudication.decider_check``).

    Each item carries what says why it waits (:func:`queue_reasons`); ``reason`` (a key of :data:`QUEUE_REASONS`)
    keeps only the items waiting for it."""
    waiting = adjudication_waiting() if can_adjudicate(user) else adjudication_blocked()
    if not (can_adjudicate(user) or can_organize(user)):
        waiting = waiting.none()
    current = Q(reviews__superseded_at__isnull=True)
    queue = (
        waiting.exclude(conflict_of_interest_q(user))
        .annotate(
            open_disputes=Count("disputes", filter=Q(disputes__status=Dispute.Status.OPEN), distinct=True),
            open_feedback=Count(
                "feedback_notes", filter=Q(feedback_notes__status=FeedbackNote.Status.OPEN), distinct=True
            ),
            verdicts_given=Count("reviews__verdict", filter=current, distinct=True),
            relevance_spread=Max("reviews__relevance", filter=current) - Min("reviews__relevance", filter=current),
            cannot_tell_reviews=Count(
                "reviews", filter=current & Q(reviews__verdict=Verdict.CANNOT_TELL), distinct=True
            ),
        )
        .select_related("batch")
        .order_by("-batch__priority", "id")
    )
    if reason in QUEUE_REASONS:
        queue = queue.filter(_queue_reason_q(reason, VettingConfig.load().relevance_gap))
    return queue


def queue_reasons(item: QAItem, *, relevance_gap: int) -> list[str]:
    """Why ``item`` (a row of :func:`adjudication_queue`) waits, in words; the same tests as the queue's filter."""
    in_adjudication = item.status == ItemStatus.IN_ADJUDICATION
    spread = getattr(item, "relevance_spread", None)
    found = {
        "disagreement": in_adjudication
        and (item.verdicts_given > 1 or (spread is not None and spread >= relevance_gap)),
        "cannot_tell": in_adjudication and item.cannot_tell_reviews > 0,
        "likely_wrong": in_adjudication and item.second_review_reason == Reason.ADJUDICATION,
        "dispute": item.open_disputes > 0,
        "feedback": item.open_feedback > 0,
    }
    return [QUEUE_REASONS[key] for key, holds in found.items() if holds] or ["Waiting for a decision"]


def adjudication_blocked() -> QuerySet[QAItem]:
    """Items waiting for adjudication that no adjudicator may decide (every adjudicator is conflicted on them, or
    there is none): shown to organizers, who give the adjudicator role to someone who has not reviewed them."""
    adjudicators = get_user_model().objects.filter(groups__name=Role.ADJUDICATOR, is_active=True)
    # An adjudicator (outer reference) with no lease on the waiting item (the reference one level further out).
    free = adjudicators.exclude(Exists(_leases_of(OuterRef("pk")).filter(item=OuterRef(OuterRef("pk")))))
    return adjudication_waiting().exclude(Exists(free)).order_by("id")


def item_adjudication_blocked(item: QAItem) -> bool:
    """True while ``item`` waits for a decision that no adjudicator may make (see :func:`adjudication_blocked`)."""
    return adjudication_blocked().filter(pk=item.pk).exists()


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
