"""Nugget pages for adjudicators (disagreements) and organizers (overview, import, export)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views import View

from annotation.forms.nuggets import NuggetAdjudicateForm, NuggetExportForm, NuggetImportForm, nugget_rows
from annotation.models import NuggetSet, QAItem
from annotation.nugget_workflow import MAX_TEXT
from annotation.selectors.blinding import REFERENCE
from annotation.selectors.nuggets import (
    disputed_items,
    items_needing_nuggets,
    nugget_overview,
    nugget_set_as_json,
    nuggets_compared,
    open_versions,
)
from annotation.services.blinding import exposure_record
from annotation.services.nugget_files import NuggetImportRefused, nuggets_export, nuggets_import
from annotation.services.nugget_versions import NuggetListInvalid
from annotation.services.nuggets import nugget_adjudicate, nugget_adjudicate_check, nugget_adjudication_blocked
from annotation.views.nuggets import IMPORTANCE_NAMES
from annotation.views.review import RefusalPageMixin
from metrics.nuggets import IMPORTANCES
from portal.downloads import attachment_header, download_name
from portal.errors import DomainError, NotAllowed
from portal.permissions import RoleRequiredMixin
from portal.roles import Role, can_adjudicate


class NuggetAdjudicationListView(RoleRequiredMixin, View):
    """The nugget disagreements waiting, oldest first; those the adjudicator took part in are marked, not opened."""

    required_roles = (Role.ADJUDICATOR,)

    def get(self, request):
        rows = []
        for item in disputed_items().select_related("batch")[:200]:
            versions = open_versions(item)
            try:
                nugget_adjudicate_check(request.user, item, versions)
                conflicted = False
            except NotAllowed:
                conflicted = True
            rows.append({"item": item, "versions": versions, "conflicted": conflicted})
        return render(request, "annotation/nugget_adjudication_list.html", {"rows": rows})


class NuggetAdjudicationView(RefusalPageMixin, RoleRequiredMixin, View):
    """Two versions side by side with the differences marked; pick one or write the final list; a note is required.
    Organizers may open it only for a disagreement no adjudicator may settle (the service says why otherwise)."""

    required_roles = (Role.ADJUDICATOR, Role.ORGANIZER)

    def get(self, request, uid):
        item, versions = self._load(request, uid)
        form = NuggetAdjudicateForm(versions=versions, initial={"pick": versions[-1].version})
        return self._render(request, item, versions, form, nugget_set_as_json(versions[-1]))

    def post(self, request, uid):
        item, versions = self._load(request, uid)
        form = NuggetAdjudicateForm(request.POST, versions=versions)
        rows = nugget_rows(request.POST)
        if not form.is_valid():
            return self._render(request, item, versions, form, rows, status=400)
        data = form.cleaned_data
        try:
            nugget_adjudicate(
                item=item,
                adjudicator=request.user,
                pick_version=data["pick"],
                note=data["note"],
                nuggets=rows if data["edit"] else None,
            )
        except NuggetListInvalid as exc:
            return self._render(request, item, versions, form, rows, problems=exc.problems, status=400)
        except DomainError as exc:
            messages.error(request, str(exc))
            return self._render(request, item, versions, form, rows, status=exc.http_status)
        messages.success(request, f"Nuggets of item {item.uid} settled.")
        return redirect("nugget_adjudication_list" if can_adjudicate(request.user) else "nugget_overview")

    def _load(self, request, uid):
        item = QAItem.objects.select_related("passage").filter(uid=uid).first()
        versions = open_versions(item) if item else []
        if item is None or not any(v.status == NuggetSet.Status.DISPUTED for v in versions):
            raise Http404("No nugget disagreement waits on this item.")
        nugget_adjudicate_check(request.user, item, versions)  # 403 with the reason (conflict of interest)
        # The page shows the item's answer (the reference of every study) to whoever opens it, settling or not.
        exposure_record(person=request.user, item=item, kinds=(REFERENCE,), where="nugget adjudication page")
        return item, versions

    def _render(self, request, item, versions, form, rows, *, problems=(), status=200):
        by_entry: dict[int, list[str]] = {}
        general = [p.detail for p in problems if p.entry is None]
        for p in problems:
            if p.entry is not None:
                by_entry.setdefault(p.entry, []).append(p.detail)
        left, right = versions[0], versions[-1]
        return render(
            request,
            "annotation/nugget_adjudication.html",
            {
                "item": item,
                "left": left,
                "right": right,
                "compared": nuggets_compared(left, right),
                "form": form,
                "rows": [{**r, "problems": by_entry.get(i, [])} for i, r in enumerate(rows, start=1)],
                "blank_row": {"id": "", "text": "", "importance": "okay", "problems": []},
                "general_problems": general,
                "importances": [(value, IMPORTANCE_NAMES[value]) for value in IMPORTANCES],
                "max_text": MAX_TEXT,
            },
            status=status,
        )


class NuggetOverviewView(RoleRequiredMixin, View):
    """Organizers: counts per status, the items needing work, the import form and the export links."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        return self._render(request, NuggetImportForm())

    def post(self, request):
        form = NuggetImportForm(request.POST, request.FILES)
        if not form.is_valid():
            return self._render(request, form, status=400)
        upload = form.cleaned_data["file"]
        try:
            counts = nuggets_import(source=upload, name=upload.name, actor=request.user)
        except NuggetImportRefused as exc:
            return self._render(request, form, errors=exc.errors, status=400)
        except DomainError as exc:
            messages.error(request, str(exc))
            return self._render(request, form, status=exc.http_status)
        messages.success(
            request,
            f"Imported {upload.name}: {counts['created']} new draft{'s' if counts['created'] != 1 else ''}, "
            f"{counts['unchanged']} unchanged, {counts['replaced_drafts']} earlier draft"
            f"{'s' if counts['replaced_drafts'] != 1 else ''} replaced.",
        )
        return redirect("nugget_overview")

    def _render(self, request, form, *, errors=(), status=200):
        return render(
            request,
            "annotation/nugget_overview.html",
            {
                "overview": nugget_overview(),
                "to_write": items_needing_nuggets().order_by("uid")[:25],
                "drafts": NuggetSet.objects.filter(status=NuggetSet.Status.DRAFT)
                .select_related("item", "created_by")
                .order_by("created_at")[:25],
                "disputed": [(item, nugget_adjudication_blocked(item)) for item in disputed_items()[:25]],
                "form": form,
                "errors": errors,
            },
            status=status,
        )


class NuggetExportView(RoleRequiredMixin, View):
    """The nugget lists as JSONL (``?status=validated`` or ``all``), streamed."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        form = NuggetExportForm(request.GET or None)
        status = form.cleaned_data["status"] if form.is_valid() else "validated"
        response = StreamingHttpResponse(
            (line.encode("utf-8") for line in nuggets_export(status=status, actor=request.user)),
            content_type="application/x-ndjson; charset=utf-8",
        )
        response["Content-Disposition"] = attachment_header(download_name("nuggets", status, "jsonl"))
        return response
