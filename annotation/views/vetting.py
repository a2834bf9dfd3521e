"""Organizer pages of the vetting workflow: progress (HTMX-polled), settings, batch pause / priority, gold items."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from annotation.forms.vetting import BatchForm, GoldForm, ReassignForm, VettingConfigForm
from annotation.models import GoldItem, ImportBatch, QAItem, VettingConfig
from annotation.qa_types import QA_TYPE_LABELS
from annotation.selectors.adjudication import item_adjudication_blocked
from annotation.selectors.vetting import (
    config_explained,
    gold_statistics,
    missing_excerpts,
    progress_bars,
    repair_list,
    vetting_progress,
)
from annotation.services.adjudication import item_reassign, may_decide
from annotation.services.gold import gold_import, gold_mark, gold_unmark
from annotation.services.vetting_config import batch_update, vetting_config_update
from portal.errors import DomainError
from portal.numbers import whole_number
from portal.permissions import RoleRequiredMixin
from portal.roles import Role
from portal.uploads import save_uploads

TYPE_LABELS = {t.value: label for t, label in QA_TYPE_LABELS.items()}


class VettingDashboardView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def _render(self, request, config_form=None, gold_form=None, status=200):
        config = VettingConfig.load()
        initial = {f: getattr(config, f) for f in VettingConfigForm.base_fields}
        progress = vetting_progress()
        return render(
            request,
            "annotation/vetting_dashboard.html",
            {
                "config": config,
                "config_form": config_form or VettingConfigForm(initial=initial),
                "explained": config_explained(config),
                "gold_form": gold_form or GoldForm(),
                "progress": progress,
                "bars": progress_bars(progress),
                "type_labels": TYPE_LABELS,
                # An organizer who also reviews never learns that an item they were given is gold.
                "gold": gold_statistics(request.user),
                "missing": missing_excerpts(),
                # An organizer who also reviews does not see what others answered on items they were given.
                "repair": repair_list(request.user),
            },
            status=status,
        )

    def get(self, request):
        return self._render(request)

    def post(self, request):
        form = VettingConfigForm(request.POST)
        if not form.is_valid():
            return self._render(request, config_form=form, status=400)
        try:
            changes = {name: value for name, value in form.cleaned_data.items() if value not in (None, "")}
            vetting_config_update(by=request.user, **changes)
        except DomainError as exc:
            messages.error(request, str(exc))
            return self._render(request, config_form=form, status=exc.http_status)
        messages.success(request, "Vetting settings saved.")
        return redirect("vetting_dashboard")


class VettingProgressPartialView(RoleRequiredMixin, View):
    """The progress tables alone, polled by the dashboard every few seconds."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        progress = vetting_progress()
        return render(
            request,
            "annotation/_vetting_progress.html",
            {"progress": progress, "bars": progress_bars(progress), "type_labels": TYPE_LABELS},
        )


class BatchUpdateView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def post(self, request, pk):
        batch = get_object_or_404(ImportBatch, pk=pk)
        form = BatchForm(request.POST)
        if form.is_valid():
            batch_update(
                batch=batch, by=request.user, paused=form.cleaned_data["paused"], priority=form.cleaned_data["priority"]
            )
            messages.success(request, f"Batch {batch.name} saved.")
        else:
            messages.error(request, "Priority must be a whole number.")
        return redirect("vetting_dashboard")


class GoldMarkView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def post(self, request):
        if "deactivate" in request.POST:
            gold = get_object_or_404(GoldItem, pk=whole_number(request.POST["deactivate"]))
            gold_unmark(gold=gold, by=request.user)
            messages.success(request, f"Gold item {gold.item.uid} no longer handed out.")
            return redirect("vetting_dashboard")
        if "gold_file" in request.FILES:
            return self._import(request)
        form = GoldForm(request.POST)
        if form.is_valid():
            item = QAItem.objects.filter(uid=form.cleaned_data["uid"].strip()).first()
            if item is None:
                form.add_error("uid", "No item with this uid.")
            else:
                try:
                    gold_mark(
                        item=item,
                        expected_verdict=form.cleaned_data["expected_verdict"],
                        by=request.user,
                        planted_error=form.cleaned_data["planted_error"],
                        note=form.cleaned_data["note"],
                    )
                    messages.success(request, f"{item.uid} is now a gold item.")
                    return redirect("vetting_dashboard")
                except DomainError as exc:
                    form.add_error(None, str(exc))
        return VettingDashboardView()._render(request, gold_form=form, status=400)

    def _import(self, request):
        try:
            paths, displays = save_uploads([request.FILES["gold_file"]])
            result = gold_import(path=paths[0], by=request.user, display=displays[str(paths[0])])
        except DomainError as exc:
            messages.error(request, f"Nothing was marked. {exc}")
            return VettingDashboardView()._render(request, status=400)
        messages.success(request, f"Gold items: {result['created']} new, {result['updated']} updated.")
        return redirect("vetting_dashboard")


class ReassignView(RoleRequiredMixin, View):
    """Send an item no adjudicator may decide back to review by fresh reviewers (organizers; see
    ``annotation.services.adjudication.item_reassign``). Shows nothing of the item's reviews, so an organizer who
    reviewed the item can use it too."""

    required_roles = (Role.ORGANIZER,)

    def _render(self, request, item, form=None, status=200):
        return render(
            request,
            "annotation/reassign.html",
            {
                "item": item,
                "form": form or ReassignForm(),
                "blocked": item_adjudication_blocked(item),
                "may_decide": may_decide(request.user, item),
            },
            status=status,
        )

    def get(self, request, uid):
        return self._render(request, get_object_or_404(QAItem, uid=uid))

    def post(self, request, uid):
        item = get_object_or_404(QAItem, uid=uid)
        form = ReassignForm(request.POST)
        if not form.is_valid():
            return self._render(request, item, form, status=400)
        try:
            item_reassign(item=item, organizer=request.user, reason=form.cleaned_data["reason"])
        except DomainError as exc:
            form.add_error(None, str(exc))
            return self._render(request, item, form, status=exc.http_status)
        messages.success(request, f"{item.uid} went back to review; people who were never given it will review it.")
        return redirect("vetting_dashboard")
