"""Nugget work pages for the medical experts: the start page, taking the next item, writing and validating."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views import View

from annotation.forms.nuggets import nugget_rows
from annotation.models import NuggetSet, NuggetTask
from annotation.nugget_workflow import MAX_NUGGETS, MAX_TEXT, NUGGET_EXPERT_ROLES
from annotation.selectors.nuggets import nugget_set_as_json
from annotation.services.nugget_versions import NuggetListInvalid
from annotation.services.nuggets import (
    nugget_next,
    nugget_submit_draft,
    nugget_task_current,
    nugget_task_release,
    nugget_validate,
)
from metrics.nuggets import IMPORTANCES
from portal.errors import DomainError
from portal.permissions import RoleRequiredMixin

EXPERTS = tuple(sorted(NUGGET_EXPERT_ROLES))
IMPORTANCE_NAMES = {"vital": "Vital", "okay": "Okay", "avoid": "Avoid"}


class NuggetStartView(RoleRequiredMixin, View):
    """What nugget work waits, the person's current lease, and the buttons that take the next item."""

    required_roles = EXPERTS

    def get(self, request):
        counts = {
            "drafts": NuggetSet.objects.filter(status=NuggetSet.Status.DRAFT).exclude(created_by=request.user).count(),
        }
        mine = NuggetTask.objects.filter(person=request.user, status=NuggetTask.Status.SUBMITTED)
        return render(
            request,
            "annotation/nugget_start.html",
            {
                "current": nugget_task_current(person=request.user),
                "counts": counts,
                "written": mine.filter(stage=NuggetTask.Stage.WRITE).count(),
                "validated": mine.filter(stage=NuggetTask.Stage.VALIDATE).count(),
                "done": request.GET.get("done", ""),
            },
        )


class NuggetNextView(RoleRequiredMixin, View):
    """POST: lease the next item (``stage`` write or validate) and open it."""

    required_roles = EXPERTS

    def post(self, request):
        stage = request.POST.get("stage", "")
        return _go_next(request, stage if stage in (NuggetTask.Stage.WRITE, NuggetTask.Stage.VALIDATE) else "")


def _go_next(request, stage: str):
    held = nugget_task_current(person=request.user)
    try:
        task = nugget_next(person=request.user, stage=stage)
    except DomainError as exc:
        messages.error(request, str(exc))
        return redirect("nugget_start")
    if held is not None and held.stage != stage:
        held.refresh_from_db(fields=["status"])
        if held.status == NuggetTask.Status.RELEASED:
            asked = "an item to write nuggets for" if stage == NuggetTask.Stage.WRITE else "a draft to validate"
            messages.info(
                request,
                f"You asked for {asked}, so the item you held ({held.get_stage_display().lower()}) "
                "was put back for someone else.",
            )
    if task is None:
        return redirect(f"{_start_url()}?done={stage or 'all'}")
    return redirect("nugget_task", pk=task.pk)


def _start_url() -> str:
    return reverse("nugget_start")


class NuggetTaskView(RoleRequiredMixin, View):
    """The writing or validating page of one lease: the item and its excerpt beside an ordered list editor."""

    required_roles = EXPERTS

    def get(self, request, pk):
        task = _own_task(request, pk)
        if task.stage == NuggetTask.Stage.VALIDATE:
            rows = nugget_set_as_json(task.nugget_set)
        else:
            rows = [{"id": "", "text": "", "importance": "vital"}]
        return _render(request, task, rows)

    def post(self, request, pk):
        task = _own_task(request, pk)
        rows = nugget_rows(request.POST)
        note = request.POST.get("note", "")
        try:
            if task.stage == NuggetTask.Stage.WRITE:
                nugget_submit_draft(task_id=task.pk, person=request.user, nuggets=rows)
                messages.success(request, f"Nuggets of item {task.item.uid} sent for validation.")
            elif request.POST.get("decision") == "accept":
                nugget_validate(task_id=task.pk, person=request.user, note=note)
                messages.success(request, f"Nuggets of item {task.item.uid} validated as written.")
            else:
                result = nugget_validate(task_id=task.pk, person=request.user, nuggets=rows, note=note)
                if result.status == NuggetSet.Status.VALIDATED:
                    messages.success(request, f"Nothing changed: nuggets of item {task.item.uid} validated.")
                else:
                    messages.success(request, f"Your changes to item {task.item.uid} went to an adjudicator.")
        except NuggetListInvalid as exc:
            return _render(request, task, rows, problems=exc.problems, note=note, status=400)
        except DomainError as exc:
            return _render(request, task, rows, refusal=str(exc), note=note, status=exc.http_status)
        return _go_next(request, task.stage)


class NuggetTaskReleaseView(RoleRequiredMixin, View):
    """POST: put the item back (it is not offered to this person again) and go to the start page."""

    required_roles = EXPERTS

    def post(self, request, pk):
        task = _own_task(request, pk)
        nugget_task_release(task_id=task.pk, person=request.user)
        messages.info(request, f"Item {task.item.uid} put back for someone else.")
        return redirect("nugget_start")


def _own_task(request, pk: int) -> NuggetTask:
    task = (
        NuggetTask.objects.select_related("item", "item__passage", "nugget_set")
        .filter(pk=pk, person=request.user)
        .first()
    )
    if task is None:
        raise Http404("No such nugget task of yours.")
    return task


def _render(request, task: NuggetTask, rows, *, problems=(), refusal: str = "", note: str = "", status: int = 200):
    by_entry: dict[int, list[str]] = {}
    general = []
    for problem in problems:
        if problem.entry is None:
            general.append(problem.detail)
        else:
            by_entry.setdefault(problem.entry, []).append(problem.detail)
    editor_rows = [
        {**row, "number": index, "problems": by_entry.get(index, [])} for index, row in enumerate(rows, start=1)
    ]
    draft = nugget_set_as_json(task.nugget_set) if task.stage == NuggetTask.Stage.VALIDATE else []
    return render(
        request,
        "annotation/nugget_task.html",
        {
            "task": task,
            "item": task.item,
            "validating": task.stage == NuggetTask.Stage.VALIDATE,
            "submitted": task.status == NuggetTask.Status.SUBMITTED,
            "expired": task.expires_at <= timezone.now(),
            "rows": editor_rows,
            "rows_posted": request.method == "POST",
            "blank_row": {"id": "", "text": "", "importance": "okay", "problems": []},
            "draft": draft,
            "general_problems": general,
            "refusal": refusal,
            "note": note,
            "importances": [(value, IMPORTANCE_NAMES[value]) for value in IMPORTANCES],
            "max_nuggets": MAX_NUGGETS,
            "max_text": MAX_TEXT,
        },
        status=status,
    )
