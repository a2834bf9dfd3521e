"""Adjudication: an adjudicator's final judgement on a disagreement, an unclear item or a disputed item; and the
organizers' way forward for an item no adjudicator may decide (they decide it, or send it back to review)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.models import Adjudication, Assignment, QAItem, Review
from annotation.selectors.adjudication import item_adjudication_blocked
from annotation.selectors.disputes import open_issues
from annotation.selectors.review import conflict_of_interest_refuse
from annotation.services.disputes import dispute_close, dispute_outcomes_settle, feedback_close
from annotation.services.review import review_validate
from annotation.services.transitions import item_transition
from annotation.workflow import ADJUDICABLE_STATES, Action, ItemStatus, Route, Stage, adjudication_action
from portal.audit import audit_record
from portal.errors import Conflict, DomainError, NotAllowed
from portal.models import User
from portal.roles import can_adjudicate, can_organize


def decider_check(user: User, item: QAItem) -> None:
    """Who may record the final judgement of ``item``; raises :class:`NotAllowed` with the reason.

    - nobody conflicted on the item (``annotation.selectors.review.conflict_of_interest_q``: they were given it to
      review), whatever their roles: someone who has not judged it decides;
    - adjudicators;
    - organizers, but only for an item no adjudicator may decide (every adjudicator reviewed it, or there is
      none), so that nothing is ever stuck; the rest is the adjudicators' work.
    """
    conflict_of_interest_refuse(user, item)
    if can_adjudicate(user):
        return
    if can_organize(user):
        if item_adjudication_blocked(item):
            return
        raise NotAllowed(
            f"An adjudicator who has not reviewed item {item.uid} can decide it; organizers decide only items that "
            "no adjudicator may decide.",
            code="adjudicator_available",
        )
    raise NotAllowed("Only adjudicators record final judgements.")


def may_decide(user: User, item: QAItem) -> bool:
    try:
        decider_check(user, item)
    except NotAllowed:
        return False
    return True


def item_adjudicate(
    *,
    item: QAItem,
    adjudicator: User,
    verdict: str,
    relevance: Any,
    reason: str,
    dispute_outcomes: Mapping[int, str] | None = None,
    dispute_outcome: str | None = None,
) -> Adjudication:
    """Record the final verdict and relevance; resolves the open disputes as the verdict implies and closes open
    feedback notes with the reason, then moves the item to verified (correct) or rejected (anything else).

    ``adjudicator``: whoever :func:`decider_check` lets decide (an adjudicator, or an organizer on a blocked item).
    ``dispute_outcomes`` (by dispute id) / ``dispute_outcome`` (for every open dispute): the adjudicator's choice,
    needed only where the verdict does not settle a dispute and refused where it contradicts the verdict
    (:func:`annotation.services.disputes.dispute_outcomes_settle`, the one rule); the refusal changes nothing.
    """
    if not (can_adjudicate(adjudicator) or can_organize(adjudicator)):
        raise NotAllowed("Only adjudicators record final judgements.")
    relevance = review_validate(verdict=verdict, relevance=relevance)
    if not (reason or "").strip():
        raise DomainError("give the reason for the final judgement", code="empty_reason")
    with transaction.atomic():
        locked = QAItem.objects.select_for_update().get(pk=item.pk)
        if locked.status not in ADJUDICABLE_STATES:
            raise Conflict(
                f"item {locked.uid} is {locked.get_status_display().lower()}, not waiting for adjudication",
                code="not_adjudicable",
            )
        decider_check(adjudicator, locked)
        open_disputes, open_notes = open_issues(locked)
        # The disputes locked after the item (the order annotation.services.disputes._lock_item_first explains) and
        # settled before anything is written: a refused outcome leaves the item and its disputes as they were.
        disputes = list(open_disputes.select_for_update().order_by("pk"))
        outcomes = dispute_outcomes_settle(
            disputes=disputes, verdict=verdict, chosen=dispute_outcomes, chosen_for_all=dispute_outcome
        )
        adjudication = Adjudication.objects.create(
            item=locked, adjudicator=adjudicator, verdict=verdict, relevance=relevance, reason=reason.strip()
        )
        audit_record(
            actor=adjudicator,
            obj=adjudication,
            action="adjudication_created",
            after={"item": locked.uid, "verdict": verdict, "relevance": relevance, "reason": adjudication.reason},
        )
        for dispute in disputes:
            dispute_close(dispute=dispute, resolver=adjudicator, outcome=outcomes[dispute.pk], note=reason)
        for note in open_notes:
            feedback_close(note=note, actor=adjudicator, response=reason, release=False)
        route = Route(adjudication_action(verdict), verdict, float(relevance), "adjudication")
        item_transition(
            item=item, action=route.action, actor=adjudicator, route=route, note=f"adjudication {adjudication.pk}"
        )
    return adjudication


def item_reassign(*, item: QAItem, organizer: User, reason: str) -> QAItem:
    """Send an item that no adjudicator may decide back to review by people who were never given it.

    Its reviews are kept (the agreement figures still count them) but marked superseded and their leases too, so
    the review slots are free again; the item returns to ``imported`` and the queue hands it only to people
    without a lease on it (``annotation.services.queue``). An organizer conflicted on the item may do this too:
    it judges nothing and shows nothing of the other reviews, and it is the way forward when everyone who could
    decide reviewed the item. Held items (open disputes or feedback) are decided, or their issues closed, instead.
    """
    if not can_organize(organizer):
        raise NotAllowed("Only organizers send an item back to review.")
    reason = (reason or "").strip()
    if not reason:
        raise DomainError("say why the item goes back to review", code="empty_reason")
    with transaction.atomic():
        locked = QAItem.objects.select_for_update().get(pk=item.pk)
        if locked.status != ItemStatus.IN_ADJUDICATION:
            raise Conflict(
                f"item {locked.uid} is {locked.get_status_display().lower()}: only an item waiting for adjudication "
                "after its reviews goes back to review (a held item is decided, or its issues closed)",
                code="not_reassignable",
            )
        if not item_adjudication_blocked(locked):
            raise Conflict(
                f"an adjudicator who has not reviewed item {locked.uid} can decide it; it stays in their queue",
                code="adjudicator_available",
            )
        now = timezone.now()
        current = Review.objects.filter(item=locked, superseded_at=None)
        superseded = list(current.values_list("pk", flat=True))
        current.update(superseded_at=now)
        Assignment.objects.filter(item=locked, status=Assignment.Status.SUBMITTED).exclude(stage=Stage.GOLD).update(
            status=Assignment.Status.SUPERSEDED
        )
        audit_record(
            actor=organizer,
            obj=locked,
            action="item_reassigned",
            after={"reason": reason, "superseded_reviews": superseded},
        )
        item_transition(
            item=item, action=Action.REASSIGN, actor=organizer, note=reason, fields={"second_review": False}
        )
    return item
