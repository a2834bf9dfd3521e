"""Adjudicator pages: the adjudication queue and the item page where the reviews are compared and the item decided.

Views validate input with a form and call one service; the rules live in ``annotation/services``."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views import View

from annotation.forms.adjudication import AdjudicationForm
from annotation.models import Dispute, VettingConfig
from annotation.selectors.adjudication import (
    QUEUE_REASONS,
    adjudication_queue,
    item_adjudication_blocked,
    item_story,
    queue_reasons,
    review_comparison,
)
from annotation.selectors.disputes import open_issue_counts
from annotation.selectors.review import reviews_visible_to
from annotation.services.adjudication import item_adjudicate, may_decide
from annotation.services.blinding import adjudication_item_open
from annotation.services.disputes import item_issues_reject, may_resolve_issues, quote_marked
from annotation.views.review import RefusalPageMixin
from annotation.workflow import RELEVANCE_SCALE, ItemStatus
from portal.audit import audit_access
from portal.errors import DomainError
from portal.permissions import RoleRequiredMixin
from portal.roles import Role, can_organize


class AdjudicationQueueView(RoleRequiredMixin, View):
    """Adjudicators: every item waiting that they may decide. Organizers: the items no adjudicator may decide."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)

    def get(self, request):
        # Filtered by why the items wait (a disagreement, a "cannot tell", a dispute, a feedback note); an unknown
        # value shows the whole queue.
        reason = request.GET.get("reason", "")
        reason = reason if reason in QUEUE_REASONS else ""
        gap = VettingConfig.load().relevance_gap
        rows = [
            (item, queue_reasons(item, relevance_gap=gap))
            for item in adjudication_queue(user=request.user, reason=reason)[:200]
        ]
        context = {"rows": rows, "reason": reason, "reasons": QUEUE_REASONS}
        return render(request, "annotation/adjudication_queue.html", context)


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
                "form": form or AdjudicationForm(item=item),
                "open_issue_counts": open_issue_counts(item),
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
        item = adjudication_item_open(user=request.user, uid=uid, where="adjudication page")
        # The page compares the reviews with their reviewers' names.
        audit_access(
            action="identities_viewed", actor=request.user, obj=item, detail="adjudication page", request=request
        )
        return self._render(request, item)

    def post(self, request, uid):
        item = adjudication_item_open(user=request.user, uid=uid, where="adjudication page")
        _, next_uid = _queue_neighbours(request.user, item.uid)
        try:
            if request.POST.get("action") == "reject_issues":
                item_issues_reject(item=item, resolver=request.user, note=request.POST.get("note", ""))
                return _after_decision(request, item, next_uid, done="Open issues closed on {uid}; it went back.")
            form = AdjudicationForm(request.POST, item=item)
            if not form.is_valid():
                return self._render(request, item, form, status=400)
            data = form.cleaned_data
            item_adjudicate(
                item=item,
                adjudicator=request.user,
                verdict=data["verdict"],
                relevance=data["relevance"],
                reason=data["reason"],
                dispute_outcomes=form.dispute_outcomes(),
            )
        except DomainError as exc:
            messages.error(request, str(exc))
            return self._render(request, item, AdjudicationForm(request.POST, item=item), status=exc.http_status)
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
