"""A judge's card (issue #43): one page per judge of a study report, what the report's judges table says of it and
what the literature asks of a judge beyond it. Organizers only, as the report is."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views import View

from analytics.models import Report
from analytics.presentation.judge_card import calibration_chart, judge_card_context
from portal.permissions import RoleRequiredMixin
from portal.roles import Role
from stats import plots

PLOT_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


def _study_report(pk: int) -> Report:
    return get_object_or_404(Report, pk=pk, kind=Report.Kind.STUDY)


class JudgeCardView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk, judge):
        report = _study_report(pk)
        context = judge_card_context(report.result or {}, judge)
        if context is None:
            raise Http404("no such judge in this report")
        has_plot = calibration_chart(report.result or {}, judge) is not None
        return render(request, "analytics/judge_card.html", {"report": report, "has_plot": has_plot, **context})


class JudgeCardPlotView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk, judge, fmt):
        report = _study_report(pk)
        chart = calibration_chart(report.result or {}, judge)
        if chart is None or fmt not in PLOT_TYPES:
            raise Http404("no such plot")
        return HttpResponse(plots.draw(chart, fmt), content_type=PLOT_TYPES[fmt])
