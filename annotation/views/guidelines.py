"""Reviewer guidelines: organizers write and version them; reviewers read them before their first item and beside
every item. The rules live in ``annotation.services.guidelines`` and ``annotation.selectors.guidelines``."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views import View

from annotation.forms.guidelines import GuidelineAcknowledgeForm, GuidelineVersionForm
from annotation.models.guidelines import BENCHMARK_LABELS
from annotation.qa_types import QAType
from annotation.selectors.guidelines import (
    guideline_acknowledgement_due,
    guideline_benchmarks,
    guideline_current,
    guideline_for_assignment,
    guideline_history,
    guideline_overview,
    guideline_set_signature,
    guideline_version_ids_read,
    guidelines_current_set,
    type_label,
)
from annotation.services.guidelines import (
    guideline_defaults_ensure,
    guideline_set_acknowledge,
    guideline_version_create,
)
from portal.errors import DomainError
from portal.permissions import RoleRequiredMixin
from portal.roles import Role

# --- the review pages' share (called from annotation/views/review.py) ----------------------------------------


def guideline_start_context(user) -> dict:
    """What the review start page shows: the current set, which versions are new to the reviewer, and whether the
    reviewer must still confirm having read them."""
    guideline_defaults_ensure()
    versions = guidelines_current_set()
    read = guideline_version_ids_read(user)
    new = {v.pk for v in versions if v.pk not in read}
    return {
        "guidelines": versions,
        "guidelines_new": new,
        "guidelines_open_new": len(new) < len(versions),
        "guidelines_due": guideline_acknowledgement_due(user, versions),
        "guideline_set": guideline_set_signature(versions),
    }


def guideline_gate(request):
    """Before the next item: a reviewer who has not confirmed the current guidelines does so with the "I have read
    them" tick sent along with "Next item". Returns a redirect back to the start page when they have not, else None."""
    guideline_defaults_ensure()
    if not guideline_acknowledgement_due(request.user):
        return None
    form = GuidelineAcknowledgeForm(request.POST)
    back = reverse("review_next")
    qa_type = request.POST.get("qa_type", "")
    if qa_type in QAType.__members__.values():
        back = f"{back}?qa_type={qa_type}"
    if not (form.is_valid() and form.cleaned_data["guidelines_read"]):
        messages.error(request, "Please read the guidelines below and tick “I have read the guidelines” first.")
        return redirect(back)
    try:
        guideline_set_acknowledge(reviewer=request.user, signature=form.cleaned_data["guideline_set"] or None)
    except DomainError as exc:
        messages.error(request, str(exc))
        return redirect(back)
    return None


def guideline_panel_context(user, assignment) -> dict:
    """The guideline beside the item: the version the review will record, and whether it is new to the reviewer."""
    version = guideline_for_assignment(assignment)
    is_new = version is not None and version.pk not in guideline_version_ids_read(user)
    return {"guideline": version, "guideline_is_new": is_new}


# --- pages ---------------------------------------------------------------------------------------------------


class GuidelineReadView(RoleRequiredMixin, View):
    """The current guidelines, for everyone who judges items."""

    required_roles = (Role.REVIEWER, Role.ADJUDICATOR, Role.ORGANIZER)

    def get(self, request):
        guideline_defaults_ensure()
        return render(request, "annotation/guidelines.html", {"guidelines": guidelines_current_set()})


class GuidelineListView(RoleRequiredMixin, View):
    """Organizers: every guideline, its current version, and the number of items it covers."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        guideline_defaults_ensure()
        return render(request, "annotation/guideline_list.html", {"rows": guideline_overview()})


class GuidelineEditView(RoleRequiredMixin, View):
    """Organizers: one guideline's history (every version, never overwritten) and a form for the next version."""

    required_roles = (Role.ORGANIZER,)

    def _pair(self, benchmark: str, qa_type: str) -> tuple[str, str]:
        if qa_type not in QAType.__members__.values() or benchmark not in guideline_benchmarks():
            raise Http404("No such benchmark or QA type.")
        return benchmark, qa_type

    def _render(self, request, benchmark, qa_type, form=None, status=200):
        current = guideline_current(benchmark=benchmark, qa_type=qa_type)
        if form is None:
            form = GuidelineVersionForm(
                initial={"text": current.text if current else "", "based_on": current.number if current else 0}
            )
        return render(
            request,
            "annotation/guideline_edit.html",
            {
                "benchmark": benchmark,
                "benchmark_label": BENCHMARK_LABELS.get(benchmark, benchmark),
                "qa_type": qa_type,
                "type_label": type_label(qa_type),
                "current": current,
                "history": guideline_history(benchmark=benchmark, qa_type=qa_type),
                "form": form,
            },
            status=status,
        )

    def get(self, request, benchmark, qa_type):
        return self._render(request, *self._pair(benchmark, qa_type))

    def post(self, request, benchmark, qa_type):
        benchmark, qa_type = self._pair(benchmark, qa_type)
        form = GuidelineVersionForm(request.POST)
        if not form.is_valid():
            return self._render(request, benchmark, qa_type, form, status=400)
        try:
            version = guideline_version_create(
                benchmark=benchmark,
                qa_type=qa_type,
                text=form.cleaned_data["text"],
                change_note=form.cleaned_data["change_note"],
                based_on=form.cleaned_data["based_on"],
                author=request.user,
            )
        except DomainError as exc:
            if exc.code == "guideline_changed":
                # Keep the author's text, now based on the version saved meanwhile: after comparing (the history
                # beside the form shows it), saving again stores their text as the next version.
                current = guideline_current(benchmark=benchmark, qa_type=qa_type)
                form = GuidelineVersionForm({**request.POST.dict(), "based_on": current.number if current else 0})
                form.is_valid()
            form.add_error(None, str(exc))
            return self._render(request, benchmark, qa_type, form, status=exc.http_status)
        messages.success(
            request,
            f"Version {version.number} of the {version.type_label} guideline saved. Reviewers see it from their next "
            "item and are asked to confirm it once.",
        )
        return redirect("guideline_edit", benchmark=benchmark, qa_type=qa_type)
