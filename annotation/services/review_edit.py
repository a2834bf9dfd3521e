"""A reviewer changing their own recent review ("undo"), and the list of their recent reviews (gold answers among
them, read-only, shown as any review is).

The rule saying whether a review may still be changed is ``annotation.workflow.review_edit_refusal``; this module
only gathers its facts from the database (for one review under a row lock, or for a page of reviews at once).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict, cast

from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from annotation.models import (
    Assignment,
    Dispute,
    FeedbackNote,
    GoldAnswer,
    GoldItem,
    QAItem,
    ReleaseItem,
    Review,
    ReviewRevision,
    VettingConfig,
)
from annotation.services.review import cannot_tell_reason_check, lease_end_status, review_validate
from annotation.services.transitions import LOCK_FIELDS, item_transition
from annotation.workflow import (
    Action,
    CannotTellReason,
    EditRefusal,
    Stage,
    Verdict,
    counts_as_judgement,
    edit_refusal_message,
    review_edit_refusal,
    route_after_primary,
)
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


@dataclass(frozen=True)
class OwnAnswer:
    """One of the reviewer's own answers as their pages show it: a review, or an answer on a gold item. The two must
    read the same (a reviewer never learns which items are gold: security report, finding 3), so both pages take
    this one shape. An answer is numbered by its lease: reviews and gold answers are numbered apart, leases
    together."""

    assignment_id: int
    item: QAItem
    verdict: str
    cannot_tell_reason: str
    relevance: int
    comment: str
    created_at: datetime
    edited_at: datetime | None
    refusal_code: str  # "" while it may be changed, else an ``EditRefusal`` code
    earlier: bool = False  # changed at least once: earlier versions are kept
    review_id: int | None = None  # None: a gold answer (never shown)

    @property
    def editable(self) -> bool:
        return not self.refusal_code

    @property
    def refusal(self) -> str:
        """The sentence to show when it may no longer be changed."""
        return edit_refusal_message(self.refusal_code) if self.refusal_code else ""

    @property
    def verdict_label(self) -> str:
        return str(Verdict(self.verdict).label)

    @property
    def reason_label(self) -> str:
        """Why its author could not tell, in words ("" with any other verdict)."""
        return str(CannotTellReason(self.cannot_tell_reason).label) if self.cannot_tell_reason else ""


# A gold answer is never changed (the accuracy figures are built on it). It reads as a second review does, which
# its author cannot change either from the moment it is sent: the generic "the item has moved on" words, shown at
# once after the answer, when a fresh first review can still be changed, would point at the gold item.
_GOLD_REFUSAL = EditRefusal.SECOND_STAGE


def _from_review(review: WithAnnotations[Review, EditFacts]) -> OwnAnswer:
    return OwnAnswer(
        assignment_id=review.assignment_id,
        item=review.item,
        verdict=review.verdict,
        cannot_tell_reason=review.cannot_tell_reason,
        relevance=review.relevance,
        comment=review.comment,
        created_at=review.created_at,
        edited_at=review.edited_at,
        refusal_code=review_edit_refusal_for(review),
        earlier=getattr(review, "earlier", False),
        review_id=review.pk,
    )


def _from_gold(answer: GoldAnswer) -> OwnAnswer:
    return OwnAnswer(
        assignment_id=answer.assignment_id,
        item=answer.gold.item,
        verdict=answer.verdict,
        cannot_tell_reason=answer.cannot_tell_reason,
        relevance=answer.relevance,
        comment=answer.comment,
        created_at=answer.created_at,
        edited_at=None,
        refusal_code=_GOLD_REFUSAL,
    )


def _reviews_of(reviewer: User) -> QuerySet[WithAnnotations[Review, EditFacts]]:
    reviews = _with_edit_facts(Review.objects.filter(reviewer=reviewer))
    # ``earlier`` rides along for the list (``_from_review`` reads it when there); the edit facts stay the type.
    return cast(
        "QuerySet[WithAnnotations[Review, EditFacts]]",
        reviews.annotate(earlier=Exists(ReviewRevision.objects.filter(review=OuterRef("pk")))),
    )


def _gold_answers_of(reviewer: User) -> QuerySet[GoldAnswer]:
    return GoldAnswer.objects.filter(reviewer=reviewer).select_related("gold__item")


def reviews_recent_of(reviewer: User, *, limit: int = RECENT_LIMIT) -> list[OwnAnswer]:
    """The reviewer's own latest reviews, gold answers among them (never anyone else's: blinding), newest first, each
    with ``editable`` and ``refusal`` (the sentence to show)."""
    newest = ("-created_at", "-id")
    answers = [_from_review(r) for r in _reviews_of(reviewer).order_by(*newest)[:limit]]
    answers += [_from_gold(a) for a in _gold_answers_of(reviewer).order_by(*newest)[:limit]]
    answers.sort(key=lambda a: (a.created_at, a.assignment_id), reverse=True)
    return answers[:limit]


def review_last_of(reviewer: User) -> OwnAnswer | None:
    """The reviewer's most recent review or gold answer (what the ``z`` key reopens)."""
    recent = reviews_recent_of(reviewer, limit=1)
    return recent[0] if recent else None


def answer_own(*, reviewer: User, assignment_id: int) -> OwnAnswer:
    """The reviewer's own review (or gold answer) of one of their leases; 404 for anyone else's and for a lease
    without one (blinding: not even a 403). Both tables are always asked, so a gold answer takes no other path."""
    review = _reviews_of(reviewer).filter(assignment_id=assignment_id).first()
    gold = _gold_answers_of(reviewer).filter(assignment_id=assignment_id).first()
    if review is not None:
        return _from_review(review)
    if gold is not None:
        return _from_gold(gold)
    raise NotFound("You have no review with that number.")


def answer_revisions(answer: OwnAnswer) -> list[ReviewRevision]:
    """The earlier versions of an answer, newest first (a gold answer has none: it is never changed)."""
    if answer.review_id is None:
        return []
    return list(ReviewRevision.objects.filter(review_id=answer.review_id).order_by("-version"))


def answer_edit(
    *,
    reviewer: User,
    assignment_id: int,
    verdict: str,
    relevance: Any,
    comment: str = "",
    cannot_tell_reason: str = "",
    now: datetime | None = None,
) -> OwnAnswer:
    """Change the reviewer's own answer of one of their leases (see :func:`review_edit`); a gold answer is refused
    as a locked review is, after the same checks of the input."""
    answer = answer_own(reviewer=reviewer, assignment_id=assignment_id)
    if answer.review_id is None:
        review_validate(verdict=verdict, relevance=relevance)
        cannot_tell_reason_check(verdict=verdict, reason=cannot_tell_reason)
        raise Conflict(answer.refusal, code="review_locked")
    review_edit(
        reviewer=reviewer,
        review_id=answer.review_id,
        verdict=verdict,
        relevance=relevance,
        comment=comment,
        cannot_tell_reason=cannot_tell_reason,
        now=now,
    )
    return answer_own(reviewer=reviewer, assignment_id=assignment_id)


def review_own(*, reviewer: User, review_id: int) -> WithAnnotations[Review, EditFacts]:
    """One of the reviewer's own reviews with its edit facts; 404 for anyone else's (blinding: not even a 403)."""
    review = _with_edit_facts(Review.objects.filter(reviewer=reviewer, pk=review_id)).first()
    if review is None:
        raise NotFound("You have no review with that number.")
    return review


def review_edit(
    *,
    reviewer: User,
    review_id: int,
    verdict: str,
    relevance: Any,
    comment: str = "",
    cannot_tell_reason: str = "",
    now: datetime | None = None,
) -> Review:
    """Change the reviewer's own review while ``annotation.workflow.review_edit_refusal`` allows it.

    The earlier version is kept as a :class:`ReviewRevision` and the change is audited (before / after). The item is
    routed again from the changed review (a changed verdict can turn a verified item into a rejected one, or send it
    to adjudication; "cannot tell: outside my field" sets the review aside and the item goes back to the queue, as
    on a first submit). Sending the same values again changes nothing. Raises ``NotFound`` for someone else's review
    and ``Conflict`` once the item has moved on.
    """
    relevance = review_validate(verdict=verdict, relevance=relevance)
    reason = cannot_tell_reason_check(verdict=verdict, reason=cannot_tell_reason)
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
        stored = (review.verdict, review.cannot_tell_reason, review.relevance, review.comment)
        if stored == (verdict, reason, relevance, comment):
            return review
        version = ReviewRevision.objects.filter(review=review).count() + 1
        ReviewRevision.objects.create(
            review=review,
            version=version,
            verdict=review.verdict,
            cannot_tell_reason=review.cannot_tell_reason,
            relevance=review.relevance,
            comment=review.comment,
            stored_at=review.edited_at or review.created_at,
        )
        before = _version_of(review)
        review.verdict, review.cannot_tell_reason = verdict, reason
        review.relevance, review.comment, review.edited_at = relevance, comment, now
        if not counts_as_judgement(reason):  # set aside as on a first submit: the stage's slot is free again
            review.superseded_at = now
            Assignment.objects.filter(pk=review.assignment_id).update(
                status=lease_end_status(stage=review.stage, reason=reason)
            )
        review.save(
            update_fields=["verdict", "cannot_tell_reason", "relevance", "comment", "edited_at", "superseded_at"]
        )
        after = _version_of(review)
        audit_record(
            actor=reviewer,
            obj=review,
            action="review_edited",
            before=before | {"version": version},
            after=after | {"version": version + 1, "item": item.uid},
        )
        _reroute(item=item, review=review, actor=reviewer)
    return review


def _version_of(review: Review) -> dict:
    """What an edit audits of a review, before and after (the reason only where there is one)."""
    version = {"verdict": review.verdict, "relevance": review.relevance, "comment": review.comment}
    if review.cannot_tell_reason:
        version["cannot_tell_reason"] = review.cannot_tell_reason
    return version


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
    judged = counts_as_judgement(review.cannot_tell_reason)
    route = route_after_primary(
        verdict=review.verdict,
        relevance=review.relevance,
        selected=bool(item.second_review),
        reason=review.cannot_tell_reason,
    )
    item_transition(
        item=item,
        action=route.action,
        actor=actor,
        route=route,
        note=f"seed {config.seed}",
        row_locked=True,
        # back in the queue: drawn again at its next first review, as on a first submit
        fields={} if judged else {"second_review": False},
    )
