"""Reviewer pages around the review page: "my recent reviews", changing one's own review, the server-side draft.

Views validate input and call one service; the rule for changing a review is ``annotation.workflow``'s.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.views import View

from annotation.forms.review import ReviewEditForm
from annotation.models import Assignment
from annotation.services.review_drafts import review_draft_get, review_draft_save
from annotation.services.review_edit import (
    answer_edit,
    answer_own,
    answer_revisions,
    review_last_of,
    reviews_recent_of,
)
from annotation.workflow import RELEVANCE_SCALE
from portal.errors import DomainError
from portal.importing import ImportProblem
from portal.parsers import json_body
from portal.permissions import RoleRequiredMixin
from portal.roles import Role


class ReviewMineView(RoleRequiredMixin, View):
    """The reviewer's own last 20 reviews, with a link to change those that may still be changed."""

    required_roles = (Role.REVIEWER,)

    def get(self, request):
        current = Assignment.objects.filter(reviewer=request.user, status=Assignment.Status.ACTIVE).first()
        return render(
            request,
            "annotation/review_mine.html",
            {"reviews": reviews_recent_of(request.user), "current": current},
        )


class ReviewLastView(RoleRequiredMixin, View):
    """The ``z`` key: open the reviewer's most recent review to change it."""

    required_roles = (Role.REVIEWER,)

    def get(self, request):
        last = review_last_of(request.user)
        if last is None:
            messages.info(request, "You have not sent a review yet.")
            return redirect("review_mine")
        return redirect("review_edit", pk=last.assignment_id)


class ReviewEditView(RoleRequiredMixin, View):
    """One of the reviewer's own reviews (numbered by its lease): the item again, the review as stored, and a form to
    change it while that is allowed. A gold answer is shown as any review that can no longer be changed."""

    required_roles = (Role.REVIEWER,)

    def _render(self, request, review, *, form=None, status=200):
        initial = {
            "verdict": review.verdict,
            "cannot_tell_reason": review.cannot_tell_reason,
            "relevance": review.relevance,
            "comment": review.comment,
        }
        return render(
            request,
            "annotation/review_edit.html",
            {
                "review": review,
                "item": review.item,
                "form": form or ReviewEditForm(initial=initial),
                "relevance_scale": RELEVANCE_SCALE,
                "refusal": review.refusal,
                "revisions": answer_revisions(review),
            },
            status=status,
        )

    def _review(self, request, pk):
        review = answer_own(reviewer=request.user, assignment_id=pk)
        review.item.passage  # noqa: B018 - load the excerpt for the page
        return review

    def get(self, request, pk):
        try:
            return self._render(request, self._review(request, pk))
        except DomainError as exc:
            messages.error(request, str(exc))
            return redirect("review_mine")

    def post(self, request, pk):
        form = ReviewEditForm(request.POST)
        try:
            if not form.is_valid():
                return self._render(request, self._review(request, pk), form=form, status=400)
            data = form.cleaned_data
            review = answer_edit(
                reviewer=request.user,
                assignment_id=pk,
                verdict=data["verdict"],
                cannot_tell_reason=data["cannot_tell_reason"],
                relevance=data["relevance"],
                comment=data["comment"],
            )
        except DomainError as exc:
            messages.error(request, str(exc))
            if exc.http_status == 404:
                return redirect("review_mine")
            return self._render(request, self._review(request, pk), form=form, status=exc.http_status)
        messages.success(request, f"Your review of {review.item.uid} was changed; the earlier version is kept.")
        return redirect("review_mine")


class ReviewDraftView(RoleRequiredMixin, View):
    """The review page's draft on the server (JSON). Same-origin with Django's CSRF check; only the lease's owner."""

    required_roles = (Role.REVIEWER,)

    def get(self, request, pk):
        try:
            return JsonResponse({"draft": review_draft_get(reviewer=request.user, assignment_id=pk)})
        except DomainError as exc:
            return JsonResponse({"detail": str(exc), "code": exc.code}, status=exc.http_status)

    def post(self, request, pk):
        if len(request.body) > 200_000:
            return JsonResponse({"detail": "The draft is too large.", "code": "invalid_draft"}, status=400)
        try:
            data = json_body(request.body or b"null", display="draft")
        except (ImportProblem, UnicodeDecodeError) as exc:
            why = str(exc) if isinstance(exc, ImportProblem) else "not UTF-8 text"
            return JsonResponse({"detail": f"The draft must be JSON: {why}.", "code": "invalid_draft"}, status=400)
        try:
            review_draft_save(reviewer=request.user, assignment_id=pk, data=data)
        except DomainError as exc:
            return JsonResponse({"detail": str(exc), "code": exc.code}, status=exc.http_status)
        return JsonResponse({"saved": True})
