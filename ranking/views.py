"""HTML pages of the ranking app: the ranker's queue and ranking page, the organizer's study pages."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views import View

from annotation.qa_types import qa_type_label
from portal.errors import DomainError
from portal.importing import ImportProblem
from portal.numbers import whole_number
from portal.parsers import json_body
from portal.permissions import RoleRequiredMixin
from portal.roles import Role
from portal.uploads import save_uploads
from ranking.downloads import export_response, study_export_name
from ranking.forms import (
    OutputsImportForm,
    StudyForm,
    answers_from_post,
    assessment_from_post,
    spans_from_post,
)
from ranking.models import RankingTask, ReferenceFlag, Study
from ranking.sample_design import design_sentence
from ranking.selectors.studies import (
    question_nuggets,
    questions_withheld_count,
    ranker_progress,
    studies_for_ranker,
    study_list,
    study_progress,
    study_rankers_withheld,
    system_list,
    task_blinded,
    task_for_ranker,
)
from ranking.services.drafts import draft_get, draft_save
from ranking.services.exports import (
    FORMATS,
    SPAN_FORMATS,
    UNNAMED_FORMATS,
    rankings_export_chunks,
    study_formats,
)
from ranking.services.feedback import reference_flag_send, reference_flags_detect
from ranking.services.outputs import outputs_import_request
from ranking.services.queue import task_next, task_release
from ranking.services.studies import study_create, study_state_set
from ranking.services.submissions import IncompleteRanking, task_slots, task_submit


class RankingHomeView(RoleRequiredMixin, View):
    required_roles = (Role.RANKER,)

    def get(self, request):
        return render(request, "ranking/home.html", {"studies": studies_for_ranker(ranker=request.user)})


def _go_next(request, study: Study, not_again=None):
    """Lease (or resume) the ranker's next question of ``study`` and open it; the done page when none is left.

    Only POST handlers call this: taking a lease changes state, so no GET (a prefetched link, a crawler) does it.
    """
    try:
        task = task_next(study=study, ranker=request.user, not_again=not_again)
    except DomainError as exc:
        messages.error(request, str(exc))
        return redirect("ranking_home")
    if task is None:
        return redirect(f"{reverse('ranking_next', args=[study.pk])}?done=1")
    return redirect("ranking_task", task_id=task.pk)


class RankingNextView(RoleRequiredMixin, View):
    """GET: the study's start page (guidelines, own progress, the button), or with ``?done=1`` the page saying
    nothing is left; POST: lease the next question and open it."""

    required_roles = (Role.RANKER,)

    def get(self, request, study_id):
        study = get_object_or_404(Study, pk=study_id)
        template = "ranking/done.html" if "done" in request.GET else "ranking/start.html"
        progress = ranker_progress(study=study, ranker=request.user)
        withheld = questions_withheld_count(study=study, ranker=request.user)
        return render(request, template, {"study": study, **progress, "withheld": withheld})

    def post(self, request, study_id):
        return _go_next(request, get_object_or_404(Study, pk=study_id))


class RankingGuidelinesView(RoleRequiredMixin, View):
    """GET: an open study's guidelines to read, on a page of their own: reading them starts nothing."""

    required_roles = (Role.RANKER,)

    def get(self, request, study_id):
        study = get_object_or_404(Study, pk=study_id, state=Study.State.OPEN)
        return render(request, "ranking/guidelines.html", {"study": study})


class RankingTaskView(RoleRequiredMixin, View):
    required_roles = (Role.RANKER,)

    def _context(self, request, task, problems=(), posted=None):
        view = task_blinded(task=task)
        return {
            "view": view,
            # Span studies: the texts exactly as stored (a JSON block keeps "\r" that HTML parsing would drop, so
            # offsets count the same characters as the server); the yes/no hallucination box is derived there.
            "span_texts": {a["slot"]: a["text"] for a in view["answers"]} if task.study.ask_spans else {},
            "ask_hallucination_box": task.study.ask_hallucination and not task.study.ask_spans,
            "task_key": str(task.pk),
            "idempotency_key": (posted or {}).get("idempotency_key") or uuid.uuid4().hex,
            "problems": problems,
            "progress": ranker_progress(study=task.study, ranker=request.user),
            "study_id": task.study_id,
        }

    def get(self, request, task_id):
        task = self._task(request, task_id)
        if task.status != task.Status.LEASED:
            skipped = task.status == task.Status.SKIPPED
            messages.info(
                request,
                "You skipped that question; it comes back after your other questions."
                if skipped
                else "That question is finished.",
            )
            return redirect("ranking_next", study_id=task.study_id)
        return render(request, "ranking/task.html", self._context(request, task))

    def post(self, request, task_id):
        task = self._task(request, task_id)
        labels, marks = assessment_from_post(request.POST, question_nuggets(question=task.question))
        try:
            task_submit(
                task_id=task.pk,
                ranker=request.user,
                answers=answers_from_post(request.POST, task_slots(task)),
                comment=request.POST.get("comment", ""),
                time_spent_ms=whole_number(request.POST.get("time_spent_ms")),
                idempotency_key=request.POST.get("idempotency_key", ""),
                unblinding_guess=request.POST.get("unblinding_guess", ""),
                nugget_labels=labels,
                sentence_marks=marks,
                spans=spans_from_post(request.POST) if task.study.ask_spans else None,
            )
        except IncompleteRanking as exc:
            return render(
                request, "ranking/task.html", self._context(request, task, exc.problems, request.POST), status=400
            )
        except DomainError as exc:
            messages.error(request, str(exc))
            return redirect("ranking_next", study_id=task.study_id)
        messages.success(request, "Ranking saved." if task.study.ask_ranking else "Saved.")
        return _go_next(request, task.study)

    @staticmethod
    def _task(request, task_id):
        try:
            return task_for_ranker(task_id=task_id, ranker=request.user)
        except DomainError as exc:
            raise Http404("No such task.") from exc


class RankingTaskSkipView(RoleRequiredMixin, View):
    required_roles = (Role.RANKER,)

    def post(self, request, task_id):
        task = RankingTaskView._task(request, task_id)
        task_release(task=task, ranker=request.user)
        messages.info(request, "Skipped: this question comes back after your other questions.")
        return _go_next(request, task.study, not_again=task)


class RankingDraftView(RoleRequiredMixin, View):
    """The ranker's unfinished ranking of one of their own tasks: GET reads it, POST (JSON, CSRF) replaces it.

    Someone else's task answers 404, the same as a missing one."""

    required_roles = (Role.RANKER,)
    MAX_BYTES = 64 * 1024

    def get(self, request, task_id):
        draft = draft_get(task=RankingTaskView._task(request, task_id))
        if draft is None:
            return JsonResponse({"draft": None})
        return JsonResponse({"draft": draft.data, "saved_at": draft.updated_at.isoformat()})

    def post(self, request, task_id):
        task = RankingTaskView._task(request, task_id)
        if len(request.body) > self.MAX_BYTES:
            return JsonResponse({"error": "The draft is too large."}, status=400)
        try:
            data = json_body(request.body or b"null", display="draft")
        except (ImportProblem, UnicodeDecodeError) as exc:
            why = str(exc) if isinstance(exc, ImportProblem) else "not UTF-8 text"
            return JsonResponse({"error": f"The draft is not valid JSON: {why}."}, status=400)
        try:
            draft = draft_save(task=task, data=data)
        except DomainError as exc:
            return JsonResponse({"error": str(exc)}, status=exc.http_status)
        return JsonResponse({"saved_at": draft.updated_at.isoformat()})


# --- organizers ------------------------------------------------------------------------------------------------


class StudyListView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        return render(request, "ranking/study_list.html", {"studies": study_list(), "systems": system_list()})


class OutputsImportView(RoleRequiredMixin, View):
    """Upload one system's outputs; the import runs as a job (all-or-nothing) and its page shows the progress."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        return render(request, "ranking/outputs_import.html", {"form": OutputsImportForm()})

    def post(self, request):
        form = OutputsImportForm(request.POST, request.FILES)
        if not form.is_valid():
            return render(request, "ranking/outputs_import.html", {"form": form}, status=400)
        try:
            paths, displays = save_uploads(form.cleaned_data["files"])
        except DomainError as exc:
            form.add_error("files", str(exc))
            return render(request, "ranking/outputs_import.html", {"form": form}, status=400)
        data = form.cleaned_data
        job = outputs_import_request(
            system=data["system"],
            family=data["family"],
            parameter_count=data["parameter_count"],
            paths=paths,
            displays=displays,
            user=request.user,
        )
        return redirect("job", job_id=job.pk)


class StudyCreateView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        return render(request, "ranking/study_form.html", {"form": StudyForm()})

    def post(self, request):
        form = StudyForm(request.POST)
        if not form.is_valid():
            return render(request, "ranking/study_form.html", {"form": form}, status=400)
        data = form.cleaned_data
        try:
            result = study_create(**{**data, "systems": list(data["systems"]), "user": request.user})
        except DomainError as exc:
            form.add_error(None, str(exc))
            return render(request, "ranking/study_form.html", {"form": form}, status=400)
        messages.success(request, f"Study created with {result.summary()}")
        if warning := _short_of_rankers_warning(result.study):
            messages.warning(request, warning)
        return redirect("study_detail", study_id=result.study.pk)


class StudyDetailView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request, study_id):
        study = get_object_or_404(Study, pk=study_id)
        return render(
            request,
            "ranking/study_detail.html",
            {
                "study": study,
                "progress": study_progress(study=study),
                "staffing": study_rankers_withheld(study=study),
                "flags": reference_flags_detect(study=study),
                "systems": study.systems.all(),
                "formats": study_formats(study),
                "identity_formats": [(fmt, label) for fmt, label in study_formats(study) if fmt not in UNNAMED_FORMATS],
                "span_formats": [(fmt, label) for fmt, label in study_formats(study) if fmt in SPAN_FORMATS],
                "release": study.release,
                "item_types": [qa_type_label(t) for t in study.item_filter.get("qa_types", [])],
                "extra_questions": _extra_questions(study),
                **_physician_sample_context(study),
            },
        )


def _physician_sample_context(study: Study) -> dict:
    """The designed sample in words, and whether one may still be drawn (no physician has a task yet): the draw
    itself is on the analytics side (it follows an imported judge), ``study_physician_sample``."""
    return {
        "sample_design": design_sentence(study.physician_sample) if study.physician_sample else "",
        "sample_open": not RankingTask.objects.filter(study=study).exists(),
    }


def _short_of_rankers_warning(study: Study) -> str:
    """Said after creating a study some of whose questions fewer people may take than it asks per question
    (counted as the queue hands questions out: blinding withholds some questions from some rankers)."""
    staffing = study_rankers_withheld(study=study)
    short = staffing["short_of_rankers"]
    if not short:
        return ""
    questions = study.questions.count()
    rankers = len(staffing["rankers"])
    return (
        f"{short} of the {questions} question{pluralize(questions)} cannot be complete yet: each needs "
        f"{study.overlap} rankers, and only {rankers} {'person' if rankers == 1 else 'people'} may rank"
        f"{' (fewer for questions whose answer some of them have seen)' if staffing['applies'] else ''}. "
        "Give more people the ranker role, or create the study with fewer rankers per question."
    )


def _extra_questions(study: Study) -> list[str]:
    """The study's extra questions in words, one entry each (the page joins them with "; ")."""
    extras = []
    if study.ask_hallucination:
        extras.append("hallucination kind" + (", derived from the marked words" if study.ask_spans else ""))
    if study.ask_harm:
        extras.append("patient harm")
    if study.unblinding_rate:
        extras.append(f"unblinding check on {study.unblinding_rate:.0%} of questions")
    return extras


class StudyStateView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request, study_id):
        """The confirmation before closing: rankers in the middle of a question cannot submit it once closed."""
        study = get_object_or_404(Study, pk=study_id)
        if not study.is_open:
            return redirect("study_detail", study_id=study.pk)
        return render(request, "ranking/study_close.html", {"study": study, "progress": study_progress(study=study)})

    def post(self, request, study_id):
        study = get_object_or_404(Study, pk=study_id)
        try:
            study_state_set(study=study, state=request.POST.get("state", ""), user=request.user)
        except DomainError as exc:
            messages.error(request, str(exc))
        return redirect("study_detail", study_id=study.pk)


class StudyExportView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request, study_id, fmt):
        study = get_object_or_404(Study, pk=study_id)
        if fmt not in FORMATS:
            raise Http404("Unknown export format.")
        try:
            chunks = rankings_export_chunks(
                study=study,
                fmt=fmt,
                identities=request.GET.get("identities") == "1",
                blind_systems=request.GET.get("blind_systems") == "1",
                user=request.user,
            )
        except DomainError as exc:
            messages.error(request, str(exc))
            return redirect("study_detail", study_id=study.pk)
        name = study_export_name(
            study,
            fmt,
            identities=request.GET.get("identities") == "1",
            blind_systems=request.GET.get("blind_systems") == "1",
        )
        return export_response(chunks, fmt, name)


class ReferenceFlagSendView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def post(self, request, study_id, flag_id):
        flag = get_object_or_404(ReferenceFlag, pk=flag_id, question__study_id=study_id)
        try:
            flag = reference_flag_send(flag=flag, user=request.user)
        except DomainError as exc:
            messages.error(request, f"Not sent: {exc}")
            return redirect("study_detail", study_id=study_id)
        messages.success(request, f"Sent {flag.question.item.uid} to vetting (dispute {flag.dispute_id}).")
        return redirect("study_detail", study_id=study_id)
