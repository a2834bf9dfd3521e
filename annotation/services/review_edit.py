"""A reviewer changing their own recent review ("undo"), and the list of their recent reviews.

The rule saying whether a review may still be changed is ``annotation.workflow.review_edit_refusal``; this module
only gathers its facts from the database (for one review under a row lock, or for a page of reviews at once).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict, cast

from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from annotation.models import (
    Assignment,
    Dispute,
    FeedbackNote,
    GoldItem,
    QAItem,
    ReleaseItem,
    Review,
    ReviewRevision,
    VettingConfig,
)
from annotation.services.review import review_validate
from annotation.services.transitions import LOCK_FIELDS, item_transition
from annotation.workflow import Action, Stage, edit_refusal_message, review_edit_refusal, route_after_primary
from portal.audit import audit_record
from portal.errors import Conflict, NotFound
from portal.models import User

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

RECENT_LIMIT = 20


class EditFacts(TypedDict):
    """What ``_with_edit_facts`` annotates a review with."""

    second_review_assigned: bool
    issue_filed: bool
    is_gold: bool
    in_release: bool


class RecentReviewFacts(EditFacts):
    """A review in the reviewer's recent list: its edit facts, and what the list page shows."""

    earlier: bool
    editable: bool
    refusal: str


def _with_edit_facts(reviews: QuerySet[Review]) -> QuerySet[WithAnnotations[Review, EditFacts]]:
    """Annotate each review with what ``review_edit_refusal`` needs to know about its item."""
    item = OuterRef("item_id")
    return reviews.select_related("item").annotate(
        # Leases given after this review: one from an earlier round (before an organizer sent the item back to
        # review) was not built on this review.
        second_review_assigned=Exists(
            Assignment.objects.filter(item=item, stage=Stage.SECONDARY, created_at__gte=OuterRef("created_at"))
        ),
        issue_filed=Exists(Dispute.objects.filter(item=item)) | Exists(FeedbackNote.objects.filter(item=item)),
        is_gold=Exists(GoldItem.objects.filter(item=item)),
        in_release=Exists(ReleaseItem.objects.filter(item=item)),
    )


def review_edit_refusal_for(review: WithAnnotations[Review, EditFacts]) -> str:
    """``""`` when ``review`` (annotated by ``_with_edit_facts``) may still be changed, else the refusal code."""
    return review_edit_refusal(
        stage=review.stage,
        item_status=review.item.status,
        final_source=review.item.final_source,
        second_review_assigned=review.second_review_assigned,
        issue_filed=review.issue_filed,
        is_gold=review.is_gold,
        in_release=review.in_release,
        set_aside=review.superseded_at is not None,
    )


def reviews_recent_of(reviewer: User, *, limit: int = RECENT_LIMIT) -> list[WithAnnotations[Review, RecentReviewFacts]]:
    """The reviewer's own latest reviews (never anyone else's: blinding), newest first, each with ``editable``,
    ``refusal`` (the sentence to show) and ``version`` (1 + the number of earlier versions)."""
    # ``editable`` and ``refusal`` are set below, on each instance: the type says they are there once returned.
    reviews = cast(
        "list[WithAnnotations[Review, RecentReviewFacts]]",
        list(
            _with_edit_facts(Review.objects.filter(reviewer=reviewer))
            .annotate(earlier=Exists(ReviewRevision.objects.filter(review=OuterRef("pk"))))
            .order_by("-created_at", "-id")[:limit]
        ),
    )
    for review in reviews:
        code = review_edit_refusal_for(review)
        review.editable = code == ""
        review.refusal = edit_refusal_message(code) if code else ""
    return reviews


def review_own(*, reviewer: User, review_id: int) -> WithAnnotations[Review, EditFacts]:
    """One of the reviewer's own reviews with its edit facts; 404 for anyone else's (blinding: not even a 403)."""
    review = _with_edit_facts(Review.objects.filter(reviewer=reviewer, pk=review_id)).first()
    if review is None:
        raise NotFound("You have no review with that number.")
    return review


def review_last_of(reviewer: User) -> Review | None:
    """The reviewer's most recent review (what the ``z`` key reopens)."""
    return Review.objects.filter(reviewer=reviewer).order_by("-created_at", "-id").first()


def review_edit(
    *,
    reviewer: User,
    review_id: int,
    verdict: str,
    relevance: Any,
    comment: str = "",
    now: datetime | None = None,
) -> Review:
    """Change the reviewer's own review while ``annotation.workflow.review_edit_refusal`` allows it.

    The earlier version is kept as a :class:`ReviewRevision` and the change is audited (before / after). The item is
    routed again from the changed review (a changed verdict can turn a verified item into a rejected one, or send it
    to adjudication). Sending the same values again changes nothing. Raises ``NotFound`` for someone else's review
    and ``Conflict`` once the item has moved on.
    """
    relevance = review_validate(verdict=verdict, relevance=relevance)
    comment = comment.strip()
    with transaction.atomic():
        owned = Review.objects.filter(reviewer=reviewer, pk=review_id).values_list("item_id", flat=True).first()
        if owned is None:
            raise NotFound("You have no review with that number.")
        # Race: a second reviewer asking for the item at this moment. The queue locks the item row before it leases
        # it (and skips rows locked by others), so holding the lock while the facts are read means either the lease
        # exists and is seen here (the change is refused), or the lease comes after the change.
        item = QAItem.objects.select_for_update().only(*LOCK_FIELDS, "second_review").get(pk=owned)
        now = now or timezone.now()  # after the lock: the change's time orders it against the leases
        review = review_own(reviewer=reviewer, review_id=review_id)
        code = review_edit_refusal_for(review)
        if code:
            raise Conflict(edit_refusal_message(code), code="review_locked")
        if (review.verdict, review.relevance, review.comment) == (verdict, relevance, comment):
            return review
        version = ReviewRevision.objects.filter(review=review).count() + 1
        ReviewRevision.objects.create(
            review=review,
            version=version,
            verdict=review.verdict,
            relevance=review.relevance,
            comment=review.comment,
            stored_at=review.edited_at or review.created_at,
        )
        before = {"verdict": review.verdict, "relevance": review.relevance, "comment": review.comment}
        review.verdict, review.relevance, review.comment, review.edited_at = verdict, relevance, comment, now
        review.save(update_fields=["verdict", "relevance", "comment", "edited_at"])
        after = {"verdict": verdict, "relevance": relevance, "comment": comment}
        audit_record(
            actor=reviewer,
            obj=review,
            action="review_edited",
            before=before | {"version": version},
            after=after | {"version": version + 1, "item": item.uid},
        )
        _reroute(item=item, review=review, actor=reviewer)
    return review


def _reroute(*, item: QAItem, review: Review, actor: User) -> None:
    """Send the item back to "reviewed" (clearing a final judgement made from the old review) and route it again."""
    config = VettingConfig.load()
    item_transition(
        item=item,
        action=Action.REVISE_PRIMARY,
        actor=actor,
        note=f"review {review.pk} changed",
        row_locked=True,
        fields={"final_verdict": "", "final_relevance": None, "final_source": "", "finalized_at": None},
    )
    route = route_after_primary(verdict=review.verdict, relevance=review.relevance, selected=bool(item.second_review))
    item_transition(
        item=item, action=route.action, actor=actor, route=route, note=f"seed {config.seed}", row_locked=True
    )
