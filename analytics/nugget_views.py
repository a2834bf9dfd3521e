"""The organizer's nugget pages of a study: leaderboard with its plot and agreement, per-item evidence, running
the matcher and importing an external judge's labels. Organizers only: these pages name the systems."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from analytics.judge_import import judge_labels_import
from analytics.nugget_matching import matcher_thresholds, nugget_matcher_request
from analytics.nugget_reports import labeller_label, study_nugget_report_cached
from analytics.nugget_selectors import nugget_questions
from analytics.presentation import nuggets as present
from analytics.presentation.judges import harm_by_system
from analytics.selectors import study_rankings
from analytics.study_judges import harm_rates
from metrics.nugget_io import NuggetInputError
from portal.errors import DomainError
from portal.models import Job
from portal.permissions import RoleRequiredMixin
from portal.roles import Role
from portal.uploads import upload_too_large
from ranking.models import Study, StudyQuestion
from stats import plots

PLOT_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


def _study(pk) -> Study:
    return get_object_or_404(Study, pk=pk)


class NuggetLeaderboardView(RoleRequiredMixin, View):
    """Systems × nugget score for one labeller (the consensus by default), the agreement table and the items."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk):
        study = _study(pk)
        report = study_nugget_report_cached(study)
        if request.GET.get("format") == "csv":
            response = HttpResponse(present.leaderboard_csv(report), content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="nugget-leaderboard-study-{study.pk}.csv"'
            return response
        labeller = present.chosen_labeller(report, request.GET.get("labeller"))
        questions = list(nugget_questions(study))
        correlations = present.correlation_rows(report)
        last_matcher = Job.objects.filter(kind="nugget_matcher", params__study_id=study.pk).order_by("-created_at")
        harm = harm_by_system(harm_rates(study_rankings(study))) if study.ask_harm and study.ask_ranking else {}
        return render(
            request,
            "analytics/nuggets.html",
            {
                "study": study,
                "report": report,
                "labeller": labeller,
                "labeller_name": labeller_label(labeller) if labeller else "",
                "choices": present.labeller_choices(report),
                "columns": present.score_columns(report, labeller) if labeller else [],
                "rows": present.leaderboard_rows(report, labeller) if labeller else [],
                "alpha": present.human_alpha(report),
                "agreement": present.agreement_rows(report),
                "ceiling": present.ceiling_band(report),
                "reading": present.agreement_reading(report),
                "correlations": correlations,
                "correlation_note": present.correlation_note(correlations),
                "questions": questions,
                "n_answers": len(report.data.answers),
                "thresholds": matcher_thresholds(),
                "last_matcher": last_matcher.first(),
                "harm": harm,
            },
        )

    def post(self, request, pk):
        study = _study(pk)
        try:
            job = nugget_matcher_request(study=study, user=request.user)
        except DomainError as exc:
            messages.error(request, f"The matcher was not started: {exc}")
            return redirect("nugget_leaderboard", pk=study.pk)
        return redirect("job", job_id=job.pk)


class NuggetPlotView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk, fmt):
        if fmt not in PLOT_TYPES:
            raise Http404("formats: svg, png")
        report = study_nugget_report_cached(_study(pk))
        labeller = present.chosen_labeller(report, request.GET.get("labeller"))
        if labeller is None:
            raise Http404("no nugget labels yet")
        body = plots.draw(present.leaderboard_chart(report, labeller), fmt)
        return HttpResponse(body, content_type=PLOT_TYPES[fmt])


class NuggetItemView(RoleRequiredMixin, View):
    """One item of the study: each system's answer, which nuggets each labeller found in it, and the evidence."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk, question_id):
        study = _study(pk)
        question = get_object_or_404(
            StudyQuestion.objects.select_related("item"), pk=question_id, study=study, nugget_set__isnull=False
        )
        report = study_nugget_report_cached(study)
        nuggets, answers = present.item_answers(report, question.item.uid)
        ids = list(nugget_questions(study).values_list("pk", flat=True))
        at = ids.index(question.pk)
        return render(
            request,
            "analytics/nugget_item.html",
            {
                "study": study,
                "question": question,
                "nuggets": nuggets,
                "answers": answers,
                "position": at + 1,
                "count": len(ids),
                "previous": ids[at - 1] if at > 0 else None,
                "next": ids[at + 1] if at + 1 < len(ids) else None,
            },
        )


class JudgeImportView(RoleRequiredMixin, View):
    """Upload a judge's labels (JSONL); refused as a whole with the file, line and field of the first problem."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk):
        return render(request, "analytics/judge_import.html", {"study": _study(pk)})

    def post(self, request, pk):
        study = _study(pk)
        upload = request.FILES.get("file")
        if upload is None:
            messages.error(request, "Nothing was imported: choose a JSONL file first.")
            return redirect("judge_import", pk=study.pk)
        too_large = upload_too_large(upload.name or "upload", upload.size or 0)
        if too_large:
            messages.error(request, f"Nothing was imported: {too_large}.")
            return redirect("judge_import", pk=study.pk)
        try:
            result = judge_labels_import(
                study=study, source=upload.read().split(b"\n"), name=upload.name, user=request.user
            )
        except NuggetInputError as exc:
            return render(request, "analytics/judge_import.html", {"study": study, "error": exc}, status=400)
        messages.success(request, f"Imported {result.total:,} labels from {result.file}: {result.summary}.")
        return redirect("nugget_leaderboard", pk=study.pk)
