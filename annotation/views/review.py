"""Reviewer and adjudicator pages: the review queue, the review page, disputes, adjudication.

Views validate input with a form and call one service; the rules live in ``annotation/services``.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views import View

from annotation.forms.review import (
    AdjudicationForm,
    CommentForm,
    DisputeForm,
    FeedbackForm,
    NextForm,
    ReviewForm,
)
from annotation.models import Assignment, Dispute, QAItem
from annotation.selectors.queue import filter_bypassed_message, filter_exhausted_message, queue_outlook
from annotation.selectors.review import (
    adjudication_queue,
    dispute_for,
    disputes_visible_to,
    feedback_notes_of,
    item_adjudication_blocked,
    item_story,
    item_unblinded_for,
    review_comparison,
    reviewer_progress,
    reviews_visible_to,
)
from annotation.services.adjudication import item_adjudicate, may_decide
from annotation.services.disputes import (
    dispute_comment_add,
    dispute_file,
    dispute_reject,
    feedback_close,
    feedback_file,
    may_resolve_issues,
    quote_marked,
)
from annotation.services.queue import assignment_current, assignment_next
from annotation.services.review import review_submit
from annotation.services.review_drafts import review_draft_clear, review_draft_get
from annotation.views.guidelines import guideline_gate, guideline_panel_context, guideline_start_context
from annotation.workflow import RELEVANCE_SCALE, ItemStatus
from portal.errors import DomainError, NotAllowed, NotFound
from portal.permissions import RoleRequiredMixin
from portal.roles import Role, can_organize


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
                **guideline_panel_context(request.user, assignment),
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
        else:
            status = ""
        filters = [("", "all"), *((value, value) for value in Dispute.Status.values)]
        return render(
            request,
            "annotation/dispute_list.html",
            {"disputes": disputes[:500], "status": status, "filters": filters},
        )


class DisputeDetailView(RefusalPageMixin, RoleRequiredMixin, View):
    """One dispute with its item in full (question, shown answer, options, the excerpt with the quoted span marked),
    its thread, and for those who may resolve it: reject it here, or uphold it by deciding the item."""

    required_roles = (Role.REVIEWER, Role.ADJUDICATOR, Role.ORGANIZER)

    def _render(self, request, dispute, form=None, status=200):
        item = dispute.item
        passage = item.passage.text if item.passage_id else ""
        marked, quote_found = quote_marked(passage, dispute.quote_text, dispute.quote_start, dispute.quote_end)
        return render(
            request,
            "annotation/dispute_detail.html",
            {
                "dispute": dispute,
                "item": item,
                "marked_excerpt": marked if passage else None,
                "quote_found": quote_found,
                "form": form or CommentForm(),
                "may_resolve": dispute.status == Dispute.Status.OPEN and may_resolve_issues(request.user, item),
                "may_decide": dispute.status == Dispute.Status.OPEN and may_decide(request.user, item),
            },
            status=status,
        )

    def _dispute(self, request, pk) -> Dispute:
        dispute = dispute_for(request.user, pk)
        dispute.item = QAItem.objects.select_related("passage", "batch").get(pk=dispute.item_id)
        return dispute

    def get(self, request, pk):
        return self._render(request, self._dispute(request, pk))

    def post(self, request, pk):
        dispute = self._dispute(request, pk)
        if request.POST.get("action") == "reject":
            try:
                dispute_reject(dispute=dispute, resolver=request.user, note=request.POST.get("note", ""))
            except DomainError as exc:
                messages.error(request, str(exc))
                return self._render(request, dispute, status=exc.http_status)
            messages.success(request, f"Dispute {dispute.pk} rejected; the item goes back to where it was.")
            return redirect("dispute_detail", pk=pk)
        form = CommentForm(request.POST)
        if form.is_valid():
            try:
                dispute_comment_add(dispute=dispute, author=request.user, text=form.cleaned_data["text"])
                return redirect("dispute_detail", pk=pk)
            except DomainError as exc:
                messages.error(request, str(exc))
        return self._render(request, dispute, form, status=400)


class AdjudicationQueueView(RoleRequiredMixin, View):
    """Adjudicators: every item waiting that they may decide. Organizers: the items no adjudicator may decide."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)

    def get(self, request):
        items = adjudication_queue(user=request.user)[:200]
        return render(request, "annotation/adjudication_queue.html", {"items": items})


def _queue_neighbours(user, uid: str) -> tuple[str | None, str | None]:
    """The queue items before and after ``uid`` (wrapping round), for moving through the queue by key."""
    uids = list(adjudication_queue(user=user).values_list("uid", flat=True)[:500])
    if uid not in uids:
        return (uids[-1] if uids else None), (uids[0] if uids else None)
    at = uids.index(uid)
    if len(uids) == 1:
        return None, None
    return uids[at - 1], uids[(at + 1) % len(uids)]


class AdjudicationItemView(RefusalPageMixin, RoleRequiredMixin, View):
    """The reviews compared field by field (un-blinded: only for people not conflicted on the item), the item's
    story, open issues and the final judgement form; after a decision the next item of the queue opens."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)

    def _render(self, request, item, form=None, status=200):
        reviews = list(reviews_visible_to(request.user, item))
        previous_uid, next_uid = _queue_neighbours(request.user, item.uid)
        disputes = list(item.disputes.select_related("raised_by").prefetch_related("comments__author"))
        # The quote of the newest open dispute is marked in the excerpt (the others are quoted under "Disputes").
        quoted = next((d for d in disputes if d.status == Dispute.Status.OPEN and d.quote_text), None)
        marked_excerpt = None
        if quoted is not None and item.passage_id:
            marked, found = quote_marked(item.passage.text, quoted.quote_text, quoted.quote_start, quoted.quote_end)
            marked_excerpt = marked if found else None
        return render(
            request,
            "annotation/adjudication_item.html",
            {
                "item": item,
                "reviews": reviews,
                "comparison": review_comparison(reviews),
                "story": item_story(request.user, item),
                "disputes": disputes,
                "marked_excerpt": marked_excerpt,
                "marked_dispute": quoted.pk if marked_excerpt else None,
                "feedback": item.feedback_notes.select_related("author"),
                "form": form or AdjudicationForm(),
                "relevance_scale": RELEVANCE_SCALE,
                "may_decide": may_decide(request.user, item),
                "may_resolve": may_resolve_issues(request.user, item),
                "may_reassign": can_organize(request.user)
                and item.status == ItemStatus.IN_ADJUDICATION
                and item_adjudication_blocked(item),
                "previous_uid": previous_uid,
                "next_uid": next_uid,
            },
            status=status,
        )

    def get(self, request, uid):
        return self._render(request, item_unblinded_for(request.user, uid))

    def post(self, request, uid):
        item = item_unblinded_for(request.user, uid)
        _, next_uid = _queue_neighbours(request.user, item.uid)
        try:
            if request.POST.get("action") == "reject_issues":
                for dispute in item.disputes.filter(status=Dispute.Status.OPEN):
                    dispute_reject(dispute=dispute, resolver=request.user, note=request.POST.get("note", ""))
                for note in item.feedback_notes.filter(status="open"):
                    feedback_close(note=note, actor=request.user, response=request.POST.get("note", ""))
                return _after_decision(request, item, next_uid, done="Open issues closed on {uid}; it went back.")
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
        return _after_decision(request, item, next_uid)


def _after_decision(request, item, next_uid: str | None, done: str = "Decided {uid}."):
    """Open the next item of the queue (the one after the decided item, if it is still waiting), or the queue."""
    waiting = adjudication_queue(user=request.user)
    if next_uid is None or not waiting.filter(uid=next_uid).exists():
        next_uid = waiting.exclude(uid=item.uid).values_list("uid", flat=True).first()
    if next_uid is None:
        messages.success(request, f"{done.format(uid=item.uid)} Nothing else is waiting for you.")
        return redirect("adjudication_queue")
    messages.success(request, f"{done.format(uid=item.uid).rstrip('.')} – next item.")
    return redirect("adjudication_item", uid=next_uid)
