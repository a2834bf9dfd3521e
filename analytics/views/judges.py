"""The organizer's page importing an automatic judge's per-answer scores into a study (its nugget labels have their
own page, :class:`analytics.views.nuggets.JudgeImportView`). Organizers only: the page names the systems."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from analytics.judges.scores import LABEL_MAX, judge_scores_import
from analytics.models import JudgeScore, Report
from evaluation.agreement import StatsInputError
from evaluation.judges import parse_label_scale
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
        scale, scale_problem = _label_scale(request.POST.get("scale", ""), study)
        if scale_problem:
            messages.error(request, f"Nothing was imported: {scale_problem}.")
            return redirect("judge_scores_import", pk=study.pk)
        try:
            result = judge_scores_import(
                study=study, source=upload.read(), name=upload.name, user=request.user, scale=scale
            )
        except InputFileError as exc:
            return render(request, TEMPLATE, _context(study, error=exc), status=400)
        messages.success(
            request,
            f"Imported {result.count_text(result.total)} from {result.file}: {result.summary}. Start a study report to compare "
            "the judges with the physicians.",
        )
        return redirect("judge_scores_import", pk=study.pk)


MAX_SCALE_LABELS = 20


def _label_scale(text: str, study: Study) -> tuple[list[str], str]:
    """The label scale the organizer typed (best first), or the study's tag scale when the field is left empty;
    and what is wrong with it, if anything."""
    try:
        scale = parse_label_scale(text[:5000])
    except StatsInputError as exc:
        return [], str(exc)
    if scale is None:
        return list(study.tag_scale), ""
    if len(scale) > MAX_SCALE_LABELS:
        return [], f"the label scale has {len(scale)} labels; at most {MAX_SCALE_LABELS}"
    if any(len(label) > LABEL_MAX for label in scale):
        return [], f"a label of the scale is longer than {LABEL_MAX} characters"
    return scale, ""


def latest_study_report(study: Study) -> Report | None:
    return Report.objects.filter(kind=Report.Kind.STUDY, params__study_id=study.pk).order_by("-created_at").first()
