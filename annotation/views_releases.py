"""Organizer pages for releases: list + freeze form, release page with Table 1 and downloads."""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views import View

from annotation.models import Release
from annotation.qa_types import CLINIQLINK_TYPES, QA_TYPE_LABELS
from annotation.services.releases import (
    EXPORT_FORMATS,
    REPORT_COLUMNS,
    RuleError,
    SelectionRule,
    composition_report,
    release_export,
    release_freeze,
    release_get,
    report_rows,
    rule_description,
)
from portal.errors import DomainError
from portal.permissions import RoleRequiredMixin
from portal.roles import Role


class FreezeForm(forms.Form):
    name = forms.SlugField(max_length=100, help_text="A new version is created if the name exists.")
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    min_relevance = forms.FloatField(
        initial=5, min_value=1, max_value=5, required=False, label="Minimum final GP relevance"
    )
    final_verdict = forms.ChoiceField(choices=[("correct", "correct"), ("", "any")], initial="correct", required=False)
    exclude_open_issues = forms.BooleanField(
        initial=True, required=False, label="Hold out items with open feedback or disputes"
    )
    qa_types = forms.MultipleChoiceField(
        choices=[(t.value, QA_TYPE_LABELS[t]) for t in CLINIQLINK_TYPES],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: all types.",
        label="QA types",
    )

    def clean(self):
        data = super().clean()
        if not self.errors:
            # The rule's own class validates it, as for the API and the command line.
            try:
                self.selection = SelectionRule.from_dict(
                    {
                        "final_verdict": data["final_verdict"] or None,
                        "min_relevance": data["min_relevance"],
                        "exclude_open_issues": data["exclude_open_issues"],
                        "qa_types": list(data["qa_types"]),
                    }
                )
            except RuleError as exc:
                self.add_error(exc.field if exc.field in self.fields else None, exc.reason)
        return data

    def rule(self) -> dict:
        return self.selection.as_dict()


class ReleaseListView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        form = FreezeForm(request.GET or None, initial={"exclude_open_issues": True})
        preview = form.selection.queryset().count() if form.is_valid() else SelectionRule().queryset().count()
        return self._render(request, form, preview)

    def post(self, request):
        form = FreezeForm(request.POST)
        if form.is_valid():
            try:
                release = release_freeze(
                    name=form.cleaned_data["name"], rule=form.rule(), note=form.cleaned_data["note"], user=request.user
                )
            except DomainError as exc:
                messages.error(request, str(exc))
            else:
                messages.success(request, f"Frozen {release.label} with {release.item_count} items.")
                return redirect("release_detail", label=release.label)
        return self._render(request, form, None, status=400)

    def _render(self, request, form, preview, status=200):
        return render(
            request,
            "annotation/release_list.html",
            {
                "form": form,
                "preview": preview,
                "releases": Release.objects.all(),
                "report": (report := composition_report()),
                "report_rows": report_rows(report),
                "columns": REPORT_COLUMNS,
            },
            status=status,
        )


class ReleaseDetailView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request, label):
        release = _release_or_404(label)
        return render(
            request,
            "annotation/release_detail.html",
            {
                "release": release,
                "rule_text": rule_description(release.rule),
                "rows": report_rows(release.report),
                "columns": REPORT_COLUMNS,
                "formats": EXPORT_FORMATS,
            },
        )


class ReleaseDownloadView(RoleRequiredMixin, View):
    """A zip of one export format; the files inside are the exact bytes of the manifest."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, label, fmt):
        release = _release_or_404(label)
        if fmt not in EXPORT_FORMATS:
            raise Http404("unknown export format")  # never echo the URL text into an HTML page
        buffer = io.BytesIO()
        with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in release_export(release=release, fmt=fmt, out_dir=Path(tmp)):
                info = zipfile.ZipInfo(
                    f"{release.name}-v{release.version}-{fmt}/{path.name}", date_time=(2025, 1, 1, 0, 0, 0)
                )
                archive.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)
            sums = "".join(f"{digest}  {name}\n" for name, digest in sorted(release.manifests[fmt].items()))
            archive.writestr(
                zipfile.ZipInfo(f"{release.name}-v{release.version}-{fmt}/SHA256SUMS", date_time=(2025, 1, 1, 0, 0, 0)),
                sums,
            )
        response = HttpResponse(buffer.getvalue(), content_type="application/zip")
        response["Content-Disposition"] = f'attachment; filename="{release.name}-v{release.version}-{fmt}.zip"'
        return response


def _release_or_404(label: str) -> Release:
    try:
        return release_get(label)
    except (DomainError, ValueError) as exc:
        raise Http404(str(exc)) from exc
