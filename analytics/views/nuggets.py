"""The organizer's nugget pages of a study: leaderboard with its plot and agreement, per-item evidence, running
the matcher and importing an external judge's labels. Organizers only: these pages name the systems."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from analytics.nuggets.board import (
    nugget_board,
    nugget_board_refresh,
    nugget_board_shown,
    study_nugget_scores,
)
from analytics.nuggets.judge_labels import judge_labels_import
from analytics.nuggets.matching import matcher_thresholds, nugget_matcher_request
from analytics.nuggets.selectors import nugget_questions
from analytics.presentation import nuggets as present
from analytics.presentation.judges import harm_by_system
from analytics.presentation.people import names_by_pseudonym
from metrics.nugget_io import NuggetInputError
from portal.downloads import attachment_header, download_name
from portal.errors import DomainError
from portal.models import Job
from portal.permissions import RoleRequiredMixin
from portal.roles import Role
from portal.uploads import upload_too_large
from ranking.models import Study, StudyAnswer, StudyQuestion
from stats import plots

PLOT_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


def _study(pk) -> Study:
    return get_object_or_404(Study, pk=pk)


#: Questions listed a page on the leaderboard (a large study has 10,000; the item pages step through all of them).
QUESTIONS_PER_PAGE = 100


class NuggetLeaderboardView(RoleRequiredMixin, View):
    """Systems × nugget score for one labeller (the consensus by default), the agreement table and the items: the
    stored board (``analytics.nuggets.board``), with what has changed since and the job computing the next."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk):
        study = _study(pk)
        state = nugget_board_shown(study, user=request.user)
        board = state.board
        if request.GET.get("format") == "csv":
            if board is None:
                raise Http404("the nugget leaderboard has not been computed yet")
            response = HttpResponse(present.leaderboard_csv(board), content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = attachment_header(download_name(study.name, "nugget leaderboard", "csv"))
            return response
        labeller = present.chosen_labeller(board, request.GET.get("labeller")) if board else None
        questions = Paginator(nugget_questions(study).prefetch_related(None), QUESTIONS_PER_PAGE).get_page(
            request.GET.get("page")
        )
        names = names_by_pseudonym(board.labellers) if board else {}
        correlations = present.correlation_rows(board, names) if board else []
        last_matcher = Job.objects.filter(kind="nugget_matcher", params__study_id=study.pk).order_by("-created_at")
        harm = harm_by_system(board.harm_rates) if board and study.ask_harm and study.ask_ranking else {}
        context = {"study": study, "state": state, "board": board, "questions": questions}
        if board is not None:
            context |= {
                "labeller": labeller,
                "labeller_name": present.labeller_name(labeller, names) if labeller else "",
                "choices": present.labeller_choices(board, names),
                "columns": present.score_columns(board, labeller) if labeller else [],
                "rows": present.leaderboard_rows(board, labeller) if labeller else [],
                "alpha": present.human_alpha(board),
                "agreement": present.agreement_rows(board, names),
                "ceiling": present.ceiling_band(board),
                "reading": present.agreement_reading(board),
                "correlations": correlations,
                "correlation_note": present.correlation_note(correlations),
                "harm": harm,
            }
        context |= {"thresholds": matcher_thresholds(), "last_matcher": last_matcher.first()}
        return render(request, "analytics/nuggets.html", context)

    def post(self, request, pk):
        study = _study(pk)
        if request.POST.get("action") == "recompute":
            nugget_board_refresh(study=study, user=request.user)
            return redirect("nugget_leaderboard", pk=study.pk)
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
        board = nugget_board(_study(pk))
        labeller = present.chosen_labeller(board, request.GET.get("labeller")) if board else None
        if labeller is None:
            raise Http404("no nugget leaderboard computed yet")
        body = plots.draw(present.leaderboard_chart(board, labeller, names_by_pseudonym(board.labellers)), fmt)
        return HttpResponse(body, content_type=PLOT_TYPES[fmt])


class NuggetItemView(RoleRequiredMixin, View):
    """One item of the study: each system's answer, which nuggets each labeller found in it, and the evidence.
    Read from this item's labels alone (not from the stored board): what a labeller gave shows at once."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, pk, question_id):
        study = _study(pk)
        question = get_object_or_404(
            StudyQuestion.objects.select_related("item"), pk=question_id, study=study, nugget_set__isnull=False
        )
        board = nugget_board(study)
        scores = study_nugget_scores(study, question_ids=[question.pk], humans=board.humans if board else ())
        answers = StudyAnswer.objects.filter(question=question).select_related("system").order_by("system__name")
        nuggets, shown = present.item_answers(scores, question.item.uid, answers, names_by_pseudonym(scores.labellers))
        # its neighbours and place from the index, not from every question of a large study
        questions = StudyQuestion.objects.filter(study=study, nugget_set__isnull=False).order_by("position")
        before = questions.filter(position__lt=question.position)
        previous = before.order_by("-position").values_list("pk", flat=True).first()
        following = questions.filter(position__gt=question.position).values_list("pk", flat=True).first()
        return render(
            request,
            "analytics/nugget_item.html",
            {
                "study": study,
                "question": question,
                "nuggets": nuggets,
                "answers": shown,
                "position": before.count() + 1,
                "count": questions.count(),
                "previous": previous,
                "next": following,
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
        messages.success(request, f"Imported {result.count_text(result.total)} from {result.file}: {result.summary}.")
        return redirect("nugget_leaderboard", pk=study.pk)
