"""Reviewer and adjudicator pages: the review queue, the review page, disputes, adjudication.

Views validate input with a form and call one service; the rules live in ``annotation/services``.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views import View

from annotation.forms_review import (
    AdjudicationForm,
    CommentForm,
    DisputeForm,
    FeedbackForm,
    NextForm,
    ReviewForm,
)
from annotation.models import Assignment, Dispute
from annotation.queue_selectors import filter_bypassed_message, filter_exhausted_message, queue_outlook
from annotation.services.adjudication import item_adjudicate
from annotation.services.disputes import (
    dispute_comment_add,
    dispute_file,
    dispute_reject,
    feedback_close,
    feedback_file,
)
from annotation.services.queue import assignment_current, assignment_next
from annotation.services.review import review_submit
from annotation.services.review_drafts import review_draft_clear, review_draft_get
from annotation.vetting_selectors import (
    adjudication_queue,
    dispute_for,
    disputes_visible_to,
    item_history_visible_to,
    item_unblinded_for,
    reviewer_progress,
    reviews_visible_to,
)
from annotation.workflow import RELEVANCE_SCALE
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
            },
        )

    def post(self, request):
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

    def _render(self, request, assignment, *, form=None, dispute_form=None, feedback_form=None, status=200):
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
                "progress": reviewer_progress(request.user),
                "outlook": queue_outlook(request.user, item=assignment.item),
                "server_draft": _draft_json(request.user, assignment),
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

    def act(self, request, assignment_id: int, data) -> None:
        review_submit(
            assignment_id=assignment_id,
            reviewer=request.user,
            idempotency_key=data["idempotency_key"],
            verdict=data["verdict"],
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
        except DomainError as exc:
            assignment = self._assignment(request, pk)
            messages.error(request, str(exc))
            return self._render(request, assignment, status=exc.http_status, **{self.form_context: form})
        review_draft_clear(reviewer=request.user, assignment_id=pk)  # a dispute or feedback note ends the lease too
        messages.success(request, self.success_message)
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
    success_message = "Feedback saved."

    def get(self, request, pk):
        return redirect("review_assignment", pk=pk)

    def act(self, request, assignment_id: int, data) -> None:
        feedback_file(
            author=request.user,
            assignment_id=assignment_id,
            idempotency_key=data["idempotency_key"],
            text=data["text"],
        )


class DisputeListView(RoleRequiredMixin, View):
    """Reviewers: their own disputes and outcomes. Adjudicators and organizers: all disputes."""

    required_roles = (Role.REVIEWER, Role.ADJUDICATOR, Role.ORGANIZER)

    def get(self, request):
        disputes = disputes_visible_to(request.user)
        status = request.GET.get("status", "")
        if status in Dispute.Status.values:
            disputes = disputes.filter(status=status)
        return render(request, "annotation/dispute_list.html", {"disputes": disputes[:500], "status": status})


class DisputeDetailView(RefusalPageMixin, RoleRequiredMixin, View):
    required_roles = (Role.REVIEWER, Role.ADJUDICATOR, Role.ORGANIZER)

    def _dispute(self, request, pk) -> Dispute:
        return dispute_for(request.user, pk)

    def get(self, request, pk):
        return render(
            request, "annotation/dispute_detail.html", {"dispute": self._dispute(request, pk), "form": CommentForm()}
        )

    def post(self, request, pk):
        dispute = self._dispute(request, pk)
        form = CommentForm(request.POST)
        if form.is_valid():
            try:
                dispute_comment_add(dispute=dispute, author=request.user, text=form.cleaned_data["text"])
                return redirect("dispute_detail", pk=pk)
            except DomainError as exc:
                messages.error(request, str(exc))
        return render(request, "annotation/dispute_detail.html", {"dispute": dispute, "form": form}, status=400)


class AdjudicationQueueView(RoleRequiredMixin, View):
    required_roles = (Role.ADJUDICATOR,)

    def get(self, request):
        items = adjudication_queue(user=request.user)[:200]
        return render(request, "annotation/adjudication_queue.html", {"items": items})


class AdjudicationItemView(RefusalPageMixin, RoleRequiredMixin, View):
    """All reviews side by side (un-blinded: adjudicators not conflicted on the item only), open issues, and the
    final judgement form."""

    required_roles = (Role.ADJUDICATOR,)

    def _render(self, request, item, form=None, status=200):
        return render(
            request,
            "annotation/adjudication_item.html",
            {
                "item": item,
                "reviews": reviews_visible_to(request.user, item),
                "disputes": item.disputes.select_related("raised_by").prefetch_related("comments__author"),
                "feedback": item.feedback_notes.select_related("author"),
                "adjudications": item.adjudications.all(),
                "form": form or AdjudicationForm(),
                "relevance_scale": RELEVANCE_SCALE,
                "history": item_history_visible_to(request.user, item),
            },
            status=status,
        )

    def get(self, request, uid):
        return self._render(request, item_unblinded_for(request.user, uid))

    def post(self, request, uid):
        item = item_unblinded_for(request.user, uid)
        try:
            if request.POST.get("action") == "reject_issues":
                for dispute in item.disputes.filter(status=Dispute.Status.OPEN):
                    dispute_reject(dispute=dispute, resolver=request.user, note=request.POST.get("note", ""))
                for note in item.feedback_notes.filter(status="open"):
                    feedback_close(note=note, actor=request.user, response=request.POST.get("note", ""))
                messages.success(request, "Open issues closed; the item went back to where it was.")
                return redirect("adjudication_queue")
            form = AdjudicationForm(request.POST)
            if not form.is_valid():
                return self._render(request, item, form, status=400)
            data = form.cleaned_data
            item_adjudicate(
                item=item,
                adjudicator=request.user,
                verdict=data["verdict"],
                relevance=data["relevance"],
                reason=data["reason"],
                dispute_outcome=data["dispute_outcome"] or "upheld",
            )
        except DomainError as exc:
            messages.error(request, str(exc))
            return self._render(request, item, AdjudicationForm(request.POST), status=exc.http_status)
        messages.success(request, f"Final judgement recorded for {item.uid}.")
        return redirect("adjudication_queue")
