"""The reviewers' reliability page (organizers): the latest fit of the reliability model, per reviewer grouped by
training level, per QA type, over time (with the drift prompt), and the adjudicators as senior labellers."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.shortcuts import redirect, render
from django.views import View

from annotation.models import VettingConfig
from annotation.selectors.reliability import (
    adjudicator_figures,
    by_training_level,
    latest_fit,
    reviewer_figures,
    type_table,
)
from annotation.services.reliability import fit_waiting, reliability_fit_request
from portal.audit import audit_access
from portal.permissions import RoleRequiredMixin
from portal.roles import Role


class ReliabilityView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        # The page names each reviewer and adjudicator beside their accuracy.
        audit_access(
            action="identities_viewed", actor=request.user, obj=("annotation.reliability", ""),
            detail="reliability page", request=request,
        )  # fmt: skip
        fit = latest_fit()
        context = {
            "fit": fit,
            "config": VettingConfig.load(),
            "refit_every": settings.RELIABILITY_REFIT_EVERY,
            "running": fit_waiting(),
        }
        if fit is not None:
            figures = reviewer_figures(fit)
            columns, rows = type_table(fit)
            context |= {
                "groups": by_training_level(figures),
                "drifting": [one for one in figures if one.row.drift],
                "adjudicators": adjudicator_figures(fit),
                "type_columns": columns,
                "type_rows": rows,
            }
        return render(request, "annotation/reliability.html", context)

    def post(self, request):
        job = reliability_fit_request(user=request.user)
        messages.success(request, "The reliability model is being fitted again.")
        return redirect("job", job_id=job.pk)
