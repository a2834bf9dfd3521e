"""Adjudication: an adjudicator's final judgement on a disagreement, an unclear item or a disputed item."""

from __future__ import annotations

from django.db import transaction

from annotation.models import Adjudication, Dispute, FeedbackNote, QAItem
from annotation.services.disputes import dispute_close, feedback_close
from annotation.services.review import review_validate
from annotation.services.transitions import item_transition
from annotation.vetting_selectors import conflict_of_interest_refuse
from annotation.workflow import ItemStatus, Route, adjudication_action
from portal.audit import audit_record
from portal.errors import Conflict, DomainError, NotAllowed
from portal.roles import can_adjudicate

ADJUDICABLE = (ItemStatus.IN_ADJUDICATION, ItemStatus.HELD)


def item_adjudicate(
    *, item: QAItem, adjudicator, verdict: str, relevance, reason: str, dispute_outcome: str = Dispute.Status.UPHELD
) -> Adjudication:
    """Record the final verdict and relevance; resolves open disputes (``dispute_outcome``) and closes open
    feedback notes with the reason, then moves the item to verified (correct) or rejected (anything else).

    An adjudicator conflicted on the item (``annotation.vetting_selectors.conflict_of_interest_q``) cannot decide it.
    """
    if not can_adjudicate(adjudicator):
        raise NotAllowed("Only adjudicators record final judgements.")
    relevance = review_validate(verdict=verdict, relevance=relevance)
    if not (reason or "").strip():
        raise DomainError("give the reason for the final judgement", code="empty_reason")
    with transaction.atomic():
        locked = QAItem.objects.select_for_update().get(pk=item.pk)
        if locked.status not in ADJUDICABLE:
            raise Conflict(
                f"item {locked.uid} is {locked.status}, not waiting for adjudication", code="not_adjudicable"
            )
        conflict_of_interest_refuse(adjudicator, locked)
        adjudication = Adjudication.objects.create(
            item=locked, adjudicator=adjudicator, verdict=verdict, relevance=relevance, reason=reason.strip()
        )
        audit_record(
            actor=adjudicator,
            obj=adjudication,
            action="adjudication_created",
            after={"item": locked.uid, "verdict": verdict, "relevance": relevance, "reason": adjudication.reason},
        )
        for dispute in locked.disputes.filter(status=Dispute.Status.OPEN):
            dispute_close(dispute=dispute, resolver=adjudicator, outcome=dispute_outcome, note=reason)
        for note in locked.feedback_notes.filter(status=FeedbackNote.Status.OPEN):
            feedback_close(note=note, actor=adjudicator, response=reason, release=False)
        route = Route(adjudication_action(verdict), verdict, float(relevance), "adjudication")
        item_transition(
            item=item, action=route.action, actor=adjudicator, route=route, note=f"adjudication {adjudication.pk}"
        )
    return adjudication
