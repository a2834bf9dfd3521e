"""The role-aware home page: each person's own next step, and for organizers what the portal needs next."""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views.generic import TemplateView

from annotation.nugget_workflow import may_write_nuggets
from annotation.selectors.adjudication import adjudication_queue
from annotation.selectors.items import item_counts_by_status
from annotation.selectors.nuggets import nugget_work_waiting
from annotation.selectors.queue import queue_outlook
from annotation.selectors.reliability import own_drift
from annotation.selectors.review import reviewer_progress
from annotation.services.queue import assignment_current
from home.next_steps import organizer_next_steps
from portal.jobs import job_counts, job_failure_seen
from portal.models import Job
from portal.permissions import AUTHENTICATED, RoleRequiredMixin
from portal.roles import ROLE_DESCRIPTIONS, can_adjudicate, can_organize, can_rank, can_review, user_roles
from ranking.selectors.studies import studies_for_ranker


class HomeView(RoleRequiredMixin, TemplateView):
    required_roles = AUTHENTICATED
    template_name = "home/home.html"

    def get_context_data(self, **kwargs):
        ctx = super().get_context_data(**kwargs)
        ctx["role_descriptions"] = ROLE_DESCRIPTIONS
        ctx.update(_own_work(self.request.user))
        if can_organize(self.request.user):
            ctx["next_steps"] = organizer_next_steps(self.request.user)
            ctx["counts"] = item_counts_by_status()
            ctx["job_counts"] = job_counts(since=timezone.now() - timedelta(days=7))
            ctx["job_statuses"] = Job.Status.choices
        return ctx

    def post(self, request):
        """A failed job listed under "What to do next": open it (``action=open``) or dismiss it (``action=dismiss``).
        Either way the organizer has taken note of it, so the list stops naming it; the jobs page keeps it."""
        if not can_organize(request.user):
            raise PermissionDenied("Only organizers act on the portal's failed jobs.")
        try:
            job_id = uuid.UUID(request.POST.get("job", ""))
        except ValueError:
            raise Http404("No such job.") from None
        job = Job.objects.filter(pk=job_id, status=Job.Status.FAILED).first()
        if job is None:
            raise Http404("No such failed job.")
        job_failure_seen(job=job)
        if request.POST.get("action") == "open":
            return redirect("job", job.pk)
        messages.success(
            request, "Dismissed: the home page no longer lists that failed job (the jobs page still does)."
        )
        return redirect(reverse("home") + "#next-steps")


def _own_work(user) -> dict:
    """What the home page offers each role as its next step (only the person's own numbers)."""
    work = {}
    if can_review(user):
        work["review_progress"] = reviewer_progress(user)
        work["review_current"] = current = assignment_current(reviewer=user)
        # The review page's own count (gold items this person may still be given included, so it moves on every
        # lease as there), never a second way of counting.
        work["review_waiting"] = queue_outlook(user, lease=current)["left"]
        work["review_drift"] = own_drift(user)
    if can_adjudicate(user):
        work["adjudication_waiting"] = adjudication_queue(user=user).count()
    if may_write_nuggets(user_roles(user)):
        work["nugget_work"] = nugget_work_waiting(user)
    if can_rank(user):
        work["ranking_studies"] = studies_for_ranker(ranker=user)
    return work
