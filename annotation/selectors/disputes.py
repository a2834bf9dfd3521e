"""Read side of disputes and feedback notes: the open-issue filter (releases hold such items out), the disputes
one may see, one's own feedback notes."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet

from annotation.models import Dispute, FeedbackNote, QAItem
from annotation.selectors.review import conflict_of_interest_q, conflict_of_interest_refuse
from portal.errors import NotFound
from portal.roles import can_adjudicate, can_organize


def _open_disputes() -> QuerySet[Dispute]:
    return Dispute.objects.filter(status=Dispute.Status.OPEN)


def _open_feedback_notes() -> QuerySet[FeedbackNote]:
    return FeedbackNote.objects.filter(status=FeedbackNote.Status.OPEN)


def open_issues(item: QAItem) -> tuple[QuerySet[Dispute], QuerySet[FeedbackNote]]:
    """The item's open issues: its open disputes and its open feedback notes. An item with one is held and is
    never released; :func:`open_issue_q` is the same rule as a filter over items."""
    return _open_disputes().filter(item=item), _open_feedback_notes().filter(item=item)


def open_issue_counts(item: QAItem) -> dict[str, int]:
    """How many disputes and feedback notes are open on the item (``{"disputes": n, "notes": m}``), so a page words
    its "close the open issues" button for what is there."""
    disputes, notes = open_issues(item)
    return {"disputes": disputes.count(), "notes": notes.count()}


def open_issue_q(prefix: str = "") -> Q:
    """``Q`` true for items with an open issue (:func:`open_issues`; ``prefix`` for related lookups)."""
    disputes = _open_disputes().filter(item=OuterRef(f"{prefix}pk"))
    notes = _open_feedback_notes().filter(item=OuterRef(f"{prefix}pk"))
    return Q(Exists(disputes)) | Q(Exists(notes))


def item_has_open_issue(item: QAItem) -> bool:
    """True while the item has an open dispute or open feedback note (it is then held, never released)."""
    return any(issues.exists() for issues in open_issues(item))


def items_without_open_issue(items: QuerySet[QAItem] | None = None) -> QuerySet[QAItem]:
    return (items if items is not None else QAItem.objects.all()).exclude(open_issue_q())


def _disputes() -> QuerySet[Dispute]:
    return Dispute.objects.select_related("item", "raised_by", "resolver").prefetch_related("comments__author")


def disputes_of(user) -> QuerySet[Dispute]:
    """The disputes ``user`` filed, whatever their roles ("My disputes")."""
    return _disputes().filter(raised_by=user)


def disputes_visible_to(user) -> QuerySet[Dispute]:
    """Reviewers: their own disputes. Adjudicators and organizers: all, except disputes by others on items they are
    conflicted on ("All disputes")."""
    disputes = _disputes()
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


def feedback_notes_of(user) -> QuerySet[FeedbackNote]:
    """The person's own feedback notes, newest first, with what became of them (open, or closed with a response)."""
    return FeedbackNote.objects.filter(author=user).select_related("item").order_by("-created_at")
