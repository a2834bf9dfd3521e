"""The organizer's page importing an automatic judge's per-answer scores into a study (its nugget labels have their
own page, :class:`analytics.nugget_views.JudgeImportView`). Organizers only: the page names the systems."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from analytics.judge_scores import judge_scores_import
from analytics.models import JudgeScore, Report
from portal.permissions import RoleRequiredMixin
from portal.roles import Role
from portal.uploads import upload_too_large
from ranking.models import Study
from records.jsonl import InputFileError

TEMPLATE = "analytics/judge_scores_import.html"


def _context(study: Study, **extra) -> dict:
    counts = dict(
        JudgeScore.objects.filter(answer__question__study=study)
        .values("judge")
        .annotate(n=Count("id"))
        .order_by("judge")
        .values_list("judge", "n")
    )
    return {"study": study, "judges": counts, "report": latest_study_report(study), **extra}


class JudgeScoresImportView(RoleRequiredMixin, View):
    """Upload a judge's scores (CSV or JSONL); refused as a whole with the file, line and field of the first problem.
    After an import the organizer starts a new study report, which compares the judges with the physicians."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk):
        return render(request, TEMPLATE, _context(get_object_or_404(Study, pk=pk)))

    def post(self, request, pk):
        study = get_object_or_404(Study, pk=pk)
        upload = request.FILES.get("file")
        if upload is None:
            messages.error(request, "Nothing was imported: choose a CSV or JSONL file first.")
            return redirect("judge_scores_import", pk=study.pk)
        too_large = upload_too_large(upload.name or "upload", upload.size or 0)
        if too_large:
            messages.error(request, f"Nothing was imported: {too_large}.")
            return redirect("judge_scores_import", pk=study.pk)
        try:
            result = judge_scores_import(study=study, source=upload.read(), name=upload.name, user=request.user)
        except InputFileError as exc:
            return render(request, TEMPLATE, _context(study, error=exc), status=400)
        messages.success(
            request,
            f"Imported {result.total:,} scores from {result.file}: {result.summary}. Start a study report to compare "
            "the judges with the physicians.",
        )
        return redirect("judge_scores_import", pk=study.pk)


def latest_study_report(study: Study) -> Report | None:
    return Report.objects.filter(kind=Report.Kind.STUDY, params__study_id=study.pk).order_by("-created_at").first()
