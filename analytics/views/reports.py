"""Organizer pages for analytics: reports (computed by jobs), plots, downloads, the printable report, and the
Task-1 leaderboard."""

from __future__ import annotations

import io

from django.contrib import messages
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views import View

from analytics.forms import ScoringForm
from analytics.leaderboards import (
    default_release,
    latest_runs,
    release_size,
    score_distributions,
    task1_cells,
    task1_columns,
    task1_table,
)
from analytics.models import Report, ScoringRun, report_study_names_attach
from analytics.presentation.charts import available_plots, missing_plots, plot_title, render_plot, task1_chart
from analytics.presentation.headlines import headline
from analytics.presentation.judges import judge_context
from analytics.presentation.people import names_by_pseudonym
from analytics.presentation.span_report import span_context
from analytics.presentation.tables import REVIEWER_GAPS, pair_rows, report_csv, stat_rows
from analytics.presentation.task1 import task1_display
from analytics.services.requests import report_request, scoring_request
from annotation.models import Release
from metrics import PROFILES
from portal import csv_cells
from portal.audit import audit_access
from portal.downloads import attachment_header, download_name
from portal.errors import DomainError
from portal.numbers import whole_number
from portal.permissions import RoleRequiredMixin
from portal.roles import Role
from ranking.models import Study
from stats import plots

PLOT_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


class AnalyticsHomeView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        return render(
            request,
            "analytics/home.html",
            {
                "reports": report_study_names_attach(Report.objects.select_related("job")[:30]),
                "studies": Study.objects.all(),
                "runs": ScoringRun.objects.select_related("system", "release", "job")[:30],
                "scoring_form": ScoringForm(),
            },
        )

    def post(self, request):
        action = request.POST.get("action")
        try:
            if action == "scoring":
                form = ScoringForm(request.POST)
                if not form.is_valid():
                    messages.error(request, f"Scoring not started: {form.errors.as_text()}")
                    return redirect("analytics_home")
                run = scoring_request(user=request.user, **form.cleaned_data)
                return redirect("job", job_id=run.job_id)
            params = {}
            if action == "study":
                params = {
                    "study_id": whole_number(request.POST.get("study_id")),  # None: refused by report_request
                    "profile": request.POST.get("profile", "cliniqlink-2025"),
                }
            report = report_request(kind=action, params=params, user=request.user)
        except (DomainError, KeyError, ValueError) as exc:
            messages.error(request, f"Nothing was started: {exc}")
            return redirect("analytics_home")
        return redirect("report_detail", pk=report.pk)


def _report(pk) -> Report:
    return get_object_or_404(Report.objects.select_related("job"), pk=pk)


def report_people(result: dict) -> dict[str, str]:
    """The names of the reviewers a stored report names by pseudonym (the report itself keeps the pseudonyms)."""
    return names_by_pseudonym(person for pair in result.get("pairs", []) for person in pair.get("pair", []))


class ReportDetailView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)
    template_name = "analytics/report_detail.html"
    printable = False

    def get(self, request, pk):
        report = _report(pk)
        result = report.result or {}
        return render(
            request,
            self.template_name,
            {
                "report": report,
                "result": result,
                "rows": stat_rows(result),
                "plots": [(name, plot_title(name)) for name in available_plots(report.kind, result)],
                "headline": headline(report.kind, result),
                "pairs": pair_rows(result, report_people(result)),
                "printable": self.printable,
                "missing_plots": missing_plots(report.kind, result),
                "reviewer_gaps": REVIEWER_GAPS,
                **judge_context(result),
                **span_context(result),
            },
        )


class ReportPrintView(ReportDetailView):
    """One self-contained HTML page (tables, SVG plots, methods, library versions) to attach to a paper."""

    template_name = "analytics/report_print.html"
    printable = True  # every section open: the page is read on paper


class ReportPlotView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk, name, fmt):
        report = _report(pk)
        if fmt not in PLOT_TYPES or name not in available_plots(report.kind, report.result or {}):
            raise Http404("no such plot")
        result = report.result or {}
        return HttpResponse(
            render_plot(report.kind, result, name, fmt, report_people(result)), content_type=PLOT_TYPES[fmt]
        )


class ReportDownloadView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk, fmt):
        report = _report(pk)
        if fmt == "json":
            response = JsonResponse(report.result, json_dumps_params={"indent": 2, "ensure_ascii": False})
        elif fmt == "csv":
            response = HttpResponse(report_csv(report.result or {}), content_type="text/csv; charset=utf-8")
        else:
            raise Http404("formats: json, csv")
        # a report is named by what it is and when it was asked for (two reports of one kind never share a name)
        when = timezone.localtime(report.created_at).strftime("%Y-%m-%d %H%M")
        response["Content-Disposition"] = attachment_header(download_name(report.kind.replace("_", " "), when, fmt))
        audit_access(
            action="export_download", actor=request.user, obj=report, detail=fmt, request=request,
            extra={"name": f"{report.pk} ({report.get_kind_display()})"},
        )  # fmt: skip
        return response


class Task1LeaderboardView(RoleRequiredMixin, View):
    """The paper's Table 2 for a release: sortable, CSV, and per-type score distributions."""

    required_roles = (Role.ORGANIZER,)

    def _scope(self, request):
        profile = request.GET.get("profile", "cliniqlink-2025")
        if profile not in PROFILES:  # the ClinIQLink metric's profiles; PromptCBLUE has a leaderboard of its own
            profile = "cliniqlink-2025"
        if "release" not in request.GET:  # first visit; an empty choice means "all answered items"
            return default_release(profile=profile), profile
        label = request.GET.get("release") or ""
        number = whole_number(label)
        release = Release.objects.filter(pk=number).first() if number is not None else None
        return release, profile

    def get(self, request):
        release, profile = self._scope(request)
        rows = task1_table(release=release, profile=profile, sort=request.GET.get("sort", "overall"))
        columns = task1_columns(rows)
        runs = {run.pk: run for run in latest_runs(release=release, profile=profile)}
        cells = {row["run_id"]: task1_cells(runs[row["run_id"]], row) for row in rows}
        total = release_size(release)
        if request.GET.get("format") == "csv":
            return self._csv(rows, columns, cells, total)
        return render(
            request,
            "analytics/task1.html",
            {
                "rows": task1_display(rows, cells, total),
                "columns": columns,
                "release": release,
                "release_items": total,
                "profile": profile,
                "releases": Release.objects.all(),
                "metrics": ["semantic", "bleu", "rouge", "meteor", "f1"],
                "has_runs": bool(runs),
            },
        )

    @staticmethod
    def _csv(rows, columns, cells, total) -> HttpResponse:
        """Full precision, with each figure's n and interval beside it (the page rounds; a download does not)."""
        keys = [k for k, _, _ in columns]
        fieldnames = ["system", "n_items", "release_items"]
        for key in keys:
            fieldnames += [key, f"{key}_n", f"{key}_ci_low", f"{key}_ci_high"]
        buffer = io.StringIO()
        writer = csv_cells.DictWriter(buffer, fieldnames=fieldnames, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            line = {**row, "release_items": total}
            for key in keys:
                cell = cells[row["run_id"]].get(key)
                if cell is not None:
                    line[f"{key}_n"] = cell.n
                    line[f"{key}_ci_low"], line[f"{key}_ci_high"] = cell.ci or (None, None)
            writer.writerow(line)
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = attachment_header("task1-leaderboard.csv")
        return response


class Task1PlotView(Task1LeaderboardView):
    def get(self, request, metric, fmt):
        if fmt not in PLOT_TYPES or metric not in {
            "semantic",
            "bleu",
            "rouge",
            "meteor",
            "f1",
            "word",
            "sentence",
            "paragraph",
        }:
            raise Http404("no such plot")
        release, profile = self._scope(request)
        data = score_distributions(release=release, profile=profile, metric=metric)
        body = plots.draw(task1_chart(data, metric=metric, profile=profile), fmt)
        return HttpResponse(body, content_type=PLOT_TYPES[fmt])
