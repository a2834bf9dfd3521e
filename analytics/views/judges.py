"""The organizer's page importing an automatic judge's per-answer scores into a study, and optionally its pairwise
verdicts (its nugget labels have their own page, :class:`analytics.views.nuggets.JudgeImportView`). Organizers only:
the page names the systems."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from analytics.judges.scores import LABEL_MAX, judge_scores_import
from analytics.judges.verdicts import judge_verdicts_import
from analytics.models import JudgeAbstention, JudgeScore, JudgeVerdict, Report
from evaluation.agreement import StatsInputError
from evaluation.judges import parse_label_scale
from portal.permissions import RoleRequiredMixin
from portal.roles import Role
from portal.uploads import upload_too_large
from ranking.models import Study
from records.jsonl import InputFileError

TEMPLATE = "analytics/judge_scores_import.html"


def _context(study: Study, **extra) -> dict:
    scores = _per_judge(JudgeScore.objects.filter(answer__question__study=study))
    abstentions = _per_judge(JudgeAbstention.objects.filter(answer__question__study=study))
    verdicts = _per_judge(JudgeVerdict.objects.filter(question__study=study))
    judges = [
        {
            "name": judge,
            "scores": scores.get(judge, 0),
            "abstentions": abstentions.get(judge, 0),
            "verdicts": verdicts.get(judge, 0),
        }
        for judge in sorted(scores.keys() | abstentions.keys() | verdicts.keys())
    ]
    return {"study": study, "judges": judges, "report": latest_study_report(study), **extra}


def _per_judge(rows) -> dict[str, int]:
    return dict(rows.values("judge").annotate(n=Count("id")).order_by("judge").values_list("judge", "n"))


class JudgeScoresImportView(RoleRequiredMixin, View):
    """Upload a judge's scores (CSV or JSONL); refused as a whole with the file, line and field of the first problem.
    After an import the organizer starts a new study report, which compares the judges with the physicians."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk):
        return render(request, TEMPLATE, _context(get_object_or_404(Study, pk=pk)))

    def post(self, request, pk):
        study = get_object_or_404(Study, pk=pk)
        if "verdicts_file" in request.FILES or request.POST.get("form") == "verdicts":
            return self._post_verdicts(request, study)
        upload = request.FILES.get("file")
        problem = _upload_problem(upload)
        if problem:
            messages.error(request, problem)
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
        declined = sum(result.abstentions.values())
        abstained = f" The judges declined {declined:,} answer{'s' if declined != 1 else ''}." if declined else ""
        messages.success(
            request,
            f"Imported {result.count_text(result.total)} from {result.file}: {result.summary}.{abstained} Start a study "
            "report to compare the judges with the physicians.",
        )
        return redirect("judge_scores_import", pk=study.pk)

    def _post_verdicts(self, request, study: Study):
        """The second form: a judge's pairwise verdicts, refused like its scores."""
        upload = request.FILES.get("verdicts_file")
        problem = _upload_problem(upload)
        if problem:
            messages.error(request, problem)
            return redirect("judge_scores_import", pk=study.pk)
        try:
            result = judge_verdicts_import(study=study, source=upload.read(), name=upload.name, user=request.user)
        except InputFileError as exc:
            return render(request, TEMPLATE, _context(study, error=exc), status=400)
        messages.success(request, f"Imported {result.count_text(result.total)} from {result.file}: {result.summary}.")
        return redirect("judge_scores_import", pk=study.pk)


def _upload_problem(upload) -> str:
    """Why an upload cannot be read (nothing chosen, too large) as a sentence for the page; "" when it can."""
    if upload is None:
        return "Nothing was imported: choose a CSV or JSONL file first."
    too_large = upload_too_large(upload.name or "upload", upload.size or 0)
    return f"Nothing was imported: {too_large}." if too_large else ""


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
