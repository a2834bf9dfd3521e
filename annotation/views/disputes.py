"""Dispute pages: one's own disputes ("My disputes"), every dispute for adjudicators and organizers ("All
disputes"), and one dispute with its item, its thread and, for those who may resolve it, rejecting it here or
deciding the item (whose final verdict upholds or rejects it: ``annotation.services.disputes``).

Views validate input with a form and call one service; the rules live in ``annotation/services``."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views import View

from annotation.forms.disputes import CommentForm
from annotation.models import Dispute, QAItem
from annotation.selectors.disputes import dispute_for, disputes_of, disputes_visible_to
from annotation.services.adjudication import may_decide
from annotation.services.blinding import dispute_shown_record
from annotation.services.disputes import (
    dispute_comment_add,
    dispute_outcomes_by_verdict,
    dispute_reject,
    may_resolve_issues,
    quote_marked,
)
from annotation.views.review import RefusalPageMixin
from annotation.workflow import Verdict
from portal.errors import DomainError
from portal.permissions import RoleRequiredMixin
from portal.roles import Role


class DisputeListView(RoleRequiredMixin, View):
    """ "My disputes": the disputes the person filed and their outcomes, whatever their other roles."""

    required_roles = (Role.REVIEWER, Role.ADJUDICATOR, Role.ORGANIZER)
    scope = "mine"

    def disputes(self, request):
        return disputes_of(request.user)

    def get(self, request):
        disputes = self.disputes(request)
        status = request.GET.get("status", "")
        if status in Dispute.Status.values:
            disputes = disputes.filter(status=status)
        else:
            status = ""
        filters = [("", "all"), *((value, value) for value in Dispute.Status.values)]
        return render(
            request,
            "annotation/dispute_list.html",
            {"disputes": disputes[:500], "status": status, "filters": filters, "scope": self.scope},
        )


class DisputeAllView(DisputeListView):
    """ "All disputes": adjudicators' and organizers' list of every dispute (less those by others on items they are
    conflicted on); the open ones wait for them."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)
    scope = "all"

    def disputes(self, request):
        return disputes_visible_to(request.user)


class DisputeDetailView(RefusalPageMixin, RoleRequiredMixin, View):
    """One dispute with its item in full (question, shown answer, options, the excerpt with the quoted span marked),
    its thread, and for those who may resolve it: reject it here, or decide the item (the page says what each
    verdict does to the dispute)."""

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
                # What deciding the item with each verdict does to this dispute (the rule's one home is the service).
                "outcome_by_verdict": [
                    (label, dispute_outcomes_by_verdict(dispute.category)[value]) for value, label in Verdict.choices
                ],
            },
            status=status,
        )

    def _dispute(self, request, pk) -> Dispute:
        dispute = dispute_for(request.user, pk)
        dispute.item = QAItem.objects.select_related("passage", "batch").get(pk=dispute.item_id)
        dispute_shown_record(user=request.user, dispute=dispute, with_answer=True, where="dispute page")
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
