"""Reviewer pages: the review queue, the review page, and a dispute or feedback note filed from it.

Views validate input with a form and call one service; the rules live in ``annotation/services``.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views import View

from annotation.forms.disputes import DisputeForm, FeedbackForm
from annotation.forms.review import GiveBackForm, NextForm, ReviewForm
from annotation.models import Assignment
from annotation.selectors.disputes import feedback_notes_of
from annotation.selectors.queue import filter_bypassed_message, filter_exhausted_message, queue_outlook
from annotation.selectors.review import reviewer_progress
from annotation.services.disputes import dispute_file, feedback_file
from annotation.services.queue import assignment_current, assignment_give_back, assignment_next
from annotation.services.review import ReviewAlreadySent, review_submit
from annotation.services.review_drafts import review_draft_clear, review_draft_get
from annotation.services.review_edit import answer_own
from annotation.views.guidelines import guideline_gate, guideline_panel_context, guideline_start_context
from annotation.workflow import RELEVANCE_SCALE, counts_as_judgement
from portal.errors import DomainError, NotAllowed, NotFound
from portal.permissions import RoleRequiredMixin
from portal.roles import Role


class RefusalPageMixin:
    """A page whose object the rules refuse to this person (403: conflict of interest) or that does not exist (404)
    answers with a page saying why, instead of Django's bare error page. Put it before ``RoleRequiredMixin``."""

    def dispatch(self, request, *args, **kwargs):
        try:
            return super().dispatch(request, *args, **kwargs)
        except (NotAllowed, NotFound) as exc:
            return render(request, "annotation/refused.html", {"message": str(exc)}, status=exc.http_status)


def _go_next(request, qa_type: str = ""):
    """Take the next lease and open it, or go back to the start page when the queue is empty. The type filter says
    what it did: nothing left of that type (and how many of other types wait), or not applied to an open lease."""
    assignment = assignment_next(reviewer=request.user, qa_type=qa_type)
    if assignment is None:
        if qa_type:
            messages.info(request, filter_exhausted_message(request.user, qa_type))
            return redirect(f"{reverse('review_next')}?done=1&qa_type={qa_type}")
        messages.info(request, "No items are waiting for you right now. Thank you!")
        return redirect(f"{reverse('review_next')}?done=1")
    if qa_type and assignment.item.qa_type != qa_type:
        messages.info(request, filter_bypassed_message(qa_type=qa_type, served_type=assignment.item.qa_type))
    url = reverse("review_assignment", args=[assignment.pk])
    return redirect(f"{url}?qa_type={qa_type}" if qa_type else url)


def _draft_json(user, assignment) -> str:
    """The owner's server-side draft as JSON for the page (review_drafts.js restores it), or ""."""
    draft = review_draft_get(reviewer=user, assignment_id=assignment.pk)
    return json.dumps(draft) if draft else ""


def _lease_state(assignment) -> dict:
    """Whether the hold on the item has run out, and how many whole minutes ago (at least 1). A review sent after
    that is still stored and marked late when nobody else has taken the item (``annotation.services.review``), so the
    page says so rather than naming a time that has passed."""
    now = timezone.now()
    over = (now - assignment.expires_at).total_seconds()
    return {"page_time": now, "lease_ended_minutes": max(1, int(over // 60)) if over > 0 else None}


class ReviewNextView(RoleRequiredMixin, View):
    """The reviewer's start page (own progress, type filter); POST takes the next item."""

    required_roles = (Role.REVIEWER,)

    def get(self, request):
        return render(
            request,
            "annotation/review_start.html",
            {
                "form": NextForm(request.GET or None),
                "progress": reviewer_progress(request.user),
                "current": assignment_current(reviewer=request.user),
                "done": "done" in request.GET,
                "my_feedback": feedback_notes_of(request.user)[:20],
                **guideline_start_context(request.user),
            },
        )

    def post(self, request):
        if (refused := guideline_gate(request)) is not None:
            return refused
        form = NextForm(request.POST)
        qa_type = form.cleaned_data["qa_type"] if form.is_valid() else ""
        return _go_next(request, qa_type)


class ReviewAssignmentView(RoleRequiredMixin, View):
    """The review page of one lease. Blind: nothing of any other review of the item is rendered."""

    required_roles = (Role.REVIEWER,)

    def _assignment(self, request, pk) -> Assignment:
        assignment = get_object_or_404(
            Assignment.objects.select_related("item", "item__passage"), pk=pk, reviewer=request.user
        )
        return assignment

    def _render(
        self,
        request,
        assignment,
        *,
        form=None,
        dispute_form=None,
        feedback_form=None,
        give_back_form=None,
        already_sent=None,
        status=200,
    ):
        qa_type = request.GET.get("qa_type") or request.POST.get("qa_type", "")
        initial = {"idempotency_key": assignment.idempotency_key, "qa_type": qa_type}
        return render(
            request,
            "annotation/review.html",
            {
                "assignment": assignment,
                "item": assignment.item,
                "relevance_scale": RELEVANCE_SCALE,
                "form": form or ReviewForm(initial=initial),
                "dispute_form": dispute_form or DisputeForm(initial=initial),
                "feedback_form": feedback_form or FeedbackForm(initial=initial),
                "give_back_form": give_back_form or GiveBackForm(initial={"qa_type": qa_type}),
                "progress": reviewer_progress(request.user),
                **guideline_panel_context(request.user, assignment),
                "outlook": queue_outlook(request.user, lease=assignment),
                "server_draft": _draft_json(request.user, assignment),
                "already_sent": already_sent,
                **_lease_state(assignment),
            },
            status=status,
        )

    def get(self, request, pk):
        assignment = self._assignment(request, pk)
        if assignment.status != Assignment.Status.ACTIVE:
            messages.info(request, "That item is done; here is your queue.")
            return redirect("review_next")
        return self._render(request, assignment)

    # The review form and its two alternatives (dispute, feedback) differ only in form, service and message.
    form_class = ReviewForm
    form_context = "form"
    success_message = "Review saved."

    def success_message_for(self, data) -> str:
        if not counts_as_judgement(data.get("cannot_tell_reason") or ""):
            return "Saved: the item goes to another reviewer, and it will not come back to you."
        return self.success_message

    def act(self, request, assignment_id: int, data) -> None:
        review_submit(
            assignment_id=assignment_id,
            reviewer=request.user,
            idempotency_key=data["idempotency_key"],
            verdict=data["verdict"],
            cannot_tell_reason=data["cannot_tell_reason"],
            relevance=data["relevance"],
            comment=data["comment"],
            active_seconds=data["active_seconds"],
        )

    def post(self, request, pk):
        # The services check that the lease is the caller's; the page's own lookup (which 404s on someone else's
        # lease) is only needed to show the form again, so the usual path skips it.
        form = self.form_class(request.POST)
        if not form.is_valid():
            return self._render(request, self._assignment(request, pk), status=400, **{self.form_context: form})
        try:
            self.act(request, pk, form.cleaned_data)
        except ReviewAlreadySent:
            # Another review was stored on this lease first (a second tab): say so, show it beside what was sent now
            # (kept in the form, to copy), and offer to make it a change where the stored one may still be changed.
            stored = answer_own(reviewer=request.user, assignment_id=pk)
            return self._render(request, self._assignment(request, pk), form=form, already_sent=stored, status=409)
        except DomainError as exc:
            assignment = self._assignment(request, pk)
            messages.error(request, str(exc))
            return self._render(request, assignment, status=exc.http_status, **{self.form_context: form})
        review_draft_clear(reviewer=request.user, assignment_id=pk)  # a dispute or feedback note ends the lease too
        messages.success(request, self.success_message_for(form.cleaned_data))
        return _go_next(request, form.cleaned_data["qa_type"])


class ReviewDisputeView(ReviewAssignmentView):
    """File a formal dispute instead of a review (ends the lease, holds the item)."""

    form_class = DisputeForm
    form_context = "dispute_form"
    success_message = "Dispute filed. You will see its outcome under “My disputes”."

    def get(self, request, pk):
        return redirect("review_assignment", pk=pk)

    def act(self, request, assignment_id: int, data) -> None:
        dispute_file(
            raised_by=request.user,
            assignment_id=assignment_id,
            idempotency_key=data["idempotency_key"],
            category=data["category"],
            text=data["text"],
            quote_text=data["quote_text"],
        )


class ReviewFeedbackView(ReviewAssignmentView):
    """Leave a feedback note instead of a review (ends the lease, holds the item)."""

    form_class = FeedbackForm
    form_context = "feedback_form"
    # A feedback note takes the place of this reviewer's review of the item (the lease ends; the item is held until
    # an adjudicator closes the note): say so, and that reviewing goes on with the next item (F15).
    success_message = (
        "Feedback saved in place of your review of that item; an adjudicator answers it (see your start page). "
        "Reviewing goes on: the next item still needs your review."
    )

    def get(self, request, pk):
        return redirect("review_assignment", pk=pk)

    def act(self, request, assignment_id: int, data) -> None:
        feedback_file(
            author=request.user,
            assignment_id=assignment_id,
            idempotency_key=data["idempotency_key"],
            text=data["text"],
        )


class ReviewGiveBackView(ReviewAssignmentView):
    """Give the item back without a judgement (outside one's field, a conflict of interest): the lease ends, the item
    goes to someone else and never back to this reviewer."""

    form_class = GiveBackForm
    form_context = "give_back_form"
    success_message = "Item given back: someone else will review it, and it will not come back to you."

    def get(self, request, pk):
        return redirect("review_assignment", pk=pk)

    def act(self, request, assignment_id: int, data) -> None:
        assignment_give_back(
            assignment_id=assignment_id, reviewer=request.user, reason=data["reason"], note=data["note"]
        )
