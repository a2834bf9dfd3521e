"""The organizer's hallucination-span pages of a study: the detector leaderboard (with the import of a detector's
predictions and its plot) and the per-item view of the physicians' and detectors' spans. Organizers only: these
pages name the systems."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from analytics.presentation import spans as present
from analytics.presentation.people import names_by_id
from analytics.spans.detectors import (
    span_detector_import,
    span_leaderboard_board,
    span_leaderboard_refresh,
    span_leaderboard_state,
    study_span_predictions,
)
from portal.permissions import RoleRequiredMixin
from portal.roles import Role
from portal.uploads import upload_too_large
from ranking.models import Study, StudyQuestion
from ranking.selectors.spans import study_span_labels, study_span_physicians
from records.jsonl import InputFileError
from stats import plots

PLOT_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


def _span_study(pk) -> Study:
    return get_object_or_404(Study, pk=pk, ask_spans=True)


def _first_question(study: Study) -> int | None:
    return study.questions.order_by("position").values_list("pk", flat=True).first()


class SpanDetectorsView(RoleRequiredMixin, View):
    """Detectors ranked by mean IoU against the physicians, per system too (the stored leaderboard, with what has
    changed since and the job computing the next); upload a detector's predictions; compute the board again."""

    required_roles = (Role.ORGANIZER,)
    template = "analytics/span_detectors.html"

    def _render(self, request, study: Study, status: int = 200, **extra):
        state = span_leaderboard_state(study)
        context = {
            "study": study,
            "state": state,
            "board": state.board,
            "first_question": _first_question(study),
            **extra,
        }
        return render(request, self.template, context, status=status)

    def get(self, request, pk):
        return self._render(request, _span_study(pk))

    def post(self, request, pk):
        study = _span_study(pk)
        if request.POST.get("action") == "recompute":
            span_leaderboard_refresh(study=study, user=request.user)
            return redirect("span_detectors", pk=study.pk)
        upload = request.FILES.get("file")
        detector = request.POST.get("detector", "")
        if upload is None:
            messages.error(request, "Nothing was imported: choose a JSONL file first.")
            return redirect("span_detectors", pk=study.pk)
        too_large = upload_too_large(upload.name or "upload", upload.size or 0)
        if too_large:
            messages.error(request, f"Nothing was imported: {too_large}.")
            return redirect("span_detectors", pk=study.pk)
        try:
            result = span_detector_import(
                study=study, detector=detector, source=upload.read().split(b"\n"), name=upload.name, user=request.user
            )
        except InputFileError as exc:
            return self._render(request, study, status=400, error=exc, detector=detector)
        replaced = f"; {result.replaced:,} earlier predictions replaced" if result.replaced else ""
        messages.success(
            request, f"Imported {result.predictions:,} predictions of {result.detector} from {result.file}{replaced}."
        )
        return redirect("span_detectors", pk=study.pk)


class SpanDetectorPlotView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk, fmt):
        if fmt not in PLOT_TYPES:
            raise Http404("formats: svg, png")
        board = span_leaderboard_board(_span_study(pk))
        if not board or not board["detectors"]:
            raise Http404("no leaderboard computed yet")
        return HttpResponse(plots.draw(present.detector_chart(board), fmt), content_type=PLOT_TYPES[fmt])


class SpanItemView(RoleRequiredMixin, View):
    """One question of a span study: each answer with the physicians' spans highlighted (hard labels outlined, soft
    labels as shading), each physician's marks in words, and each detector's predictions beside them."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk, question_id):
        study = _span_study(pk)
        question = get_object_or_404(StudyQuestion.objects.select_related("item"), study=study, pk=question_id)
        # its neighbours and place in the queue from the index, not from every question of a large study
        questions = study.questions.order_by("position")
        before = questions.filter(position__lt=question.position)
        previous = before.order_by("-position").values_list("pk", flat=True).first()
        following = questions.filter(position__gt=question.position).values_list("pk", flat=True).first()
        # Only this question's answers, marks and predictions: the page must not read the whole study.
        labels = study_span_labels(study, question_id=question_id)
        names = names_by_id(study_span_physicians(study))  # organizers read names, as on every analytics page
        predictions = study_span_predictions(study, question_id=question_id)
        answers = [
            present.answer_view(a, names, {name: p[a.answer_id] for name, p in predictions.items() if a.answer_id in p})
            for a in labels
        ]
        return render(
            request,
            "analytics/span_item.html",
            {
                "study": study,
                "question": question,
                "answers": answers,
                "legend": present.SHADE_LEGEND,
                "position": before.count() + 1,
                "count": questions.count(),
                "previous": previous,
                "next": following,
            },
        )
