"""Organizer pages for PromptCBLUE: the leaderboard of a release (with its downloads and plots), a run's scored
samples with their parse misses, and one sample's parsed gold beside its parsed answer."""

from __future__ import annotations

import io
import json

from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views import View

from analytics.leaderboards import default_release, latest_runs
from analytics.models import PromptCblueScore, ScoringRun
from analytics.presentation import promptcblue as present
from annotation.models import Release
from metrics.promptcblue import TASKS, task_named
from portal import csv_cells
from portal.downloads import attachment_header, download_name
from portal.numbers import whole_number
from portal.permissions import RoleRequiredMixin
from portal.roles import Role
from stats import plots

PLOT_TYPES = {"png": "image/png", "svg": "image/svg+xml"}
SAMPLES_PER_PAGE = 50
PROFILE = ScoringRun.PROMPTCBLUE


def _release(request) -> Release | None:
    """The release asked for; on a first visit the newest one with a PromptCBLUE run ("" = all answered items)."""
    if "release" not in request.GET:
        return default_release(profile=PROFILE)
    number = whole_number(request.GET.get("release") or "")
    return Release.objects.filter(pk=number).first() if number is not None else None


def _runs(release) -> list[ScoringRun]:
    return present.ordered_runs(latest_runs(release=release, profile=PROFILE))


class PromptCblueLeaderboardView(RoleRequiredMixin, View):
    """Tasks × systems, each figure with its interval and n; parse misses per task and system; CSV and JSON."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        release = _release(request)
        runs = _runs(release)
        fmt = request.GET.get("format")
        if fmt == "csv":
            return self._csv(runs, release)
        if fmt == "json":
            body = json.dumps(present.board_json(runs, release), ensure_ascii=False, indent=2)
            response = HttpResponse(body, content_type="application/json; charset=utf-8")
            response["Content-Disposition"] = attachment_header(download_name("promptcblue", "leaderboard", "json"))
            return response
        return render(
            request,
            "analytics/promptcblue.html",
            {
                "release": release,
                "releases": Release.objects.all(),
                "runs": runs,
                "systems": [
                    {
                        "run": run,
                        "coverage": present.coverage(run),
                        "gap": bool(run.run_record.get("unanswered")),
                        "plot": f"run-{run.pk}",
                    }
                    for run in runs
                ],  # fmt: skip
                "rows": present.board_rows(runs),
                "misses": present.miss_rows(runs),
                "official": any(present.is_official(run) for run in runs),
                "bootstrap": runs[0].run_record.get("bootstrap") if runs else None,
            },
        )

    @staticmethod
    def _csv(runs, release) -> HttpResponse:
        buffer = io.StringIO()
        writer = csv_cells.DictWriter(buffer, fieldnames=present.BOARD_CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(present.board_csv_rows(runs))
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = attachment_header(download_name("promptcblue", "leaderboard", "csv"))
        return response


class PromptCbluePlotView(RoleRequiredMixin, View):
    """``overall``: each system's score; ``run-<id>``: one run's figure per task."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, name, fmt):
        if fmt not in PLOT_TYPES:
            raise Http404("formats: svg, png")
        if name == "overall":
            chart = present.overall_chart(_runs(_release(request)))
        elif name.startswith("run-") and (number := whole_number(name.removeprefix("run-"))) is not None:
            run = get_object_or_404(ScoringRun.objects.select_related("system"), pk=number, profile=PROFILE)
            chart = present.system_chart(run)
        else:
            raise Http404("no such plot")
        return HttpResponse(plots.draw(chart, fmt), content_type=PLOT_TYPES[fmt])


def _run(pk) -> ScoringRun:
    return get_object_or_404(
        ScoringRun.objects.select_related("system", "release"), pk=pk, profile=PROFILE, finished_at__isnull=False
    )


class PromptCblueRunView(RoleRequiredMixin, View):
    """A run's samples: filtered by task and to those with parse misses; the per-sample scores as CSV (the
    ``item,system,score`` columns ``metric_correlation --scores`` reads, and more)."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk):
        run = _run(pk)
        samples = PromptCblueScore.objects.filter(run=run).select_related("item").order_by("pk")
        if request.GET.get("format") == "csv":
            return self._csv(run, samples)
        chosen = task_named(request.GET.get("task") or "")
        task = chosen.name if chosen is not None else ""
        if chosen is not None:
            samples = samples.filter(task=task)
        misses_only = request.GET.get("misses") == "1"
        if misses_only:
            samples = samples.filter(n_parse_misses__gt=0)
        page = Paginator(samples.defer("gold", "prediction", "stats"), SAMPLES_PER_PAGE).get_page(
            request.GET.get("page")
        )
        query = "&".join(part for part in (f"task={task}" if task else "", "misses=1" if misses_only else "") if part)
        return render(
            request,
            "analytics/promptcblue_run.html",
            {
                "run": run,
                "page": page,
                "query": query,
                "task": task,
                "misses_only": misses_only,
                "tasks": [
                    (t.name, present.task_label(t.name)) for t in TASKS if t.name in run.run_record.get("tasks", {})
                ],
                "coverage": present.coverage(run),
                "official": present.is_official(run),
            },
        )

    @staticmethod
    def _csv(run, samples) -> HttpResponse:
        fields = ["item", "system", "score", "task", "sample_id", "answered", "parse_misses", "official_parser_fails"]
        buffer = io.StringIO()
        writer = csv_cells.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for sample in samples.only("item__uid", "score", "task", "sample_id", "answered", "n_parse_misses",
                                   "official_parser_fails"):  # fmt: skip
            writer.writerow(
                {
                    "item": sample.item.uid,
                    "system": run.system.name,
                    "score": sample.score,
                    "task": sample.task,
                    "sample_id": sample.sample_id,
                    "answered": sample.answered,
                    "parse_misses": sample.n_parse_misses,
                    "official_parser_fails": sample.official_parser_fails,
                }
            )
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
        name = download_name(run.system.name, "promptcblue samples", "csv")
        response["Content-Disposition"] = attachment_header(name)
        return response


class PromptCblueSampleView(RoleRequiredMixin, View):
    """One sample: the question, the gold and the generated text, both as the official parser reads them, the
    lines no template matched, and the same sample in the other systems' runs on this release."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk, sample_pk):
        run = _run(pk)
        sample = get_object_or_404(PromptCblueScore.objects.select_related("item", "output"), pk=sample_pk, run=run)
        task = task_named(sample.task)
        if task is None:
            raise Http404("unknown task")
        other_runs = {other.pk: other for other in latest_runs(release=run.release, profile=PROFILE)}
        other_runs.pop(run.pk, None)
        # one read for every other system's score of this sample
        found = PromptCblueScore.objects.filter(run_id__in=list(other_runs), item_id=sample.item_id).order_by("run_id")
        others = [(other_runs[other.run_id], other) for other in found]
        raw_record = sample.item.raw if isinstance(sample.item.raw, dict) else {}
        return render(
            request,
            "analytics/promptcblue_sample.html",
            {
                "run": run,
                "sample": sample,
                "task_label": present.task_label(task.name),
                "metric": present.metric_name(task),
                "question": raw_record.get("input", sample.item.question),
                "gold_text": raw_record.get("target", sample.item.answer),
                "generated": sample.output.raw if sample.output and isinstance(sample.output.raw, str) else (
                    sample.output.response if sample.output else ""),
                "blocks": present.structure_blocks(task.kind, sample.gold, sample.prediction),
                "stats_text": present.stats_text(task.kind, sample.stats),
                "others": others,
            },
        )  # fmt: skip
