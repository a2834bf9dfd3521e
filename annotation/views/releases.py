"""Organizer pages for releases: list + freeze form, release page with Table 1 and downloads."""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views import View

from annotation.forms.releases import FreezeForm
from annotation.models import Release
from annotation.qa_types import CLINIQLINK_TYPES, DEFAULT_BENCHMARK, qa_type_label
from annotation.selectors.releases import REPORT_COLUMNS, composition_report, report_rows
from annotation.services.release_card import CARD_FILE, card_split, frozen_with_card, release_card
from annotation.services.release_contents import FORMAT_LABELS, export_readme, release_coverage, selection_preview
from annotation.services.release_nuggets import NUGGETS_FORMAT
from annotation.services.release_rules import SelectionRule, rule_description
from annotation.services.releases import EXPORT_FORMATS, release_export, release_freeze, release_get, release_next_label
from portal.audit import audit_access
from portal.downloads import attachment_header, download_name
from portal.errors import DomainError
from portal.permissions import RoleRequiredMixin
from portal.roles import Role


class ReleaseListView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        # The form is sent by GET (Preview, and "Freeze…" with confirm=1): it carries no CSRF token, so none lands
        # in the address bar or the logs; only the confirmation page's POST carries one.
        form = FreezeForm(request.GET or None, initial={"exclude_open_issues": True})
        selection = SelectionRule(benchmark=DEFAULT_BENCHMARK)
        if form.is_bound:
            valid = form.is_valid()
            selection = getattr(form, "selection", selection)
            if valid and request.GET.get("confirm"):
                return self._confirm(request, form, selection)
            if not request.GET.get("confirm"):
                # Previewing needs no release name yet: that is asked for only when freezing.
                form.errors.pop("name", None)
        return self._render(request, form, selection_preview(selection))

    def _confirm(self, request, form, selection):
        """What a freeze would take, with the one button that freezes it: a release cannot be undone."""
        return render(
            request,
            "annotation/release_confirm.html",
            {
                "form": form,
                "preview": selection_preview(selection),
                "next_label": release_next_label(form.cleaned_data["name"]),
                "rule_text": selection.describe(),
                "back_query": _without(request.GET, "confirm"),
            },
        )

    def post(self, request):
        form = FreezeForm(request.POST)
        if form.is_valid():
            try:
                release = release_freeze(
                    name=form.cleaned_data["name"],
                    rule=form.rule(),
                    note=form.cleaned_data["note"],
                    user=request.user,
                    with_nuggets=form.cleaned_data["with_nuggets"],
                )
            except DomainError as exc:
                messages.error(request, str(exc))
            else:
                messages.success(request, f"Frozen {release.label} with {release.item_count} items.")
                return redirect("release_detail", label=release.label)
        selection = getattr(form, "selection", SelectionRule(benchmark=DEFAULT_BENCHMARK))
        return self._render(request, form, selection_preview(selection), status=400)

    def _render(self, request, form, preview, status=200):
        latest = Release.objects.order_by("-created_at", "-pk").first()
        # "In release" of the live table: the items of the release frozen last (0 everywhere before any).
        included = set(latest.items.values_list("item_id", flat=True)) if latest else set()
        return render(
            request,
            "annotation/release_list.html",
            {
                "form": form,
                "preview": preview,
                "releases": _with_rule_text(Release.objects.all()),
                "latest": latest,
                "report": (report := composition_report(included_ids=included)),
                "report_rows": _labelled(report_rows(report)),
                "in_release_label": f"In {latest}" if latest else "In a release",
                "columns": REPORT_COLUMNS,
            },
            status=status,
        )


class ReleaseDetailView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request, label):
        release = _release_or_404(label)
        # The card as the exports hold it: its front matter shown as written, its body rendered with raw HTML
        # escaped (the template's guideline_markdown filter).
        card_front, card_body = card_split(release_card(release))
        return render(
            request,
            "annotation/release_detail.html",
            {
                "release": release,
                "card_file": CARD_FILE,
                "card_front": card_front,
                "card_body": card_body,
                "card_in_exports": frozen_with_card(release),
                "rule_text": rule_description(release.rule),
                "rows": _labelled(report_rows(release.report)),
                "columns": REPORT_COLUMNS,
                "coverage": release_coverage(release),
                "format_labels": FORMAT_LABELS,
                "in_release_label": "In this release",
                "items_with_nuggets": release.items.filter(nuggets__isnull=False).count(),
            },
        )


class ReleaseDownloadView(RoleRequiredMixin, View):
    """A zip of one export format; the files inside are the exact bytes of the manifest."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, label, fmt):
        release = _release_or_404(label)
        if fmt == NUGGETS_FORMAT and release.with_nuggets:
            with tempfile.TemporaryDirectory() as tmp:
                (path,) = release_export(release=release, fmt=fmt, out_dir=Path(tmp))
                response = HttpResponse(path.read_bytes(), content_type="application/x-ndjson; charset=utf-8")
            name = download_name(f"{release.name} v{release.version}", "nuggets", "jsonl")
            response["Content-Disposition"] = attachment_header(name)
            _audit_download(request, release, fmt)
            return response
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
            archive.writestr(
                zipfile.ZipInfo(f"{release.name}-v{release.version}-{fmt}/README.txt", date_time=(2025, 1, 1, 0, 0, 0)),
                export_readme(release, fmt),
            )
        response = HttpResponse(buffer.getvalue(), content_type="application/zip")
        response["Content-Disposition"] = attachment_header(
            download_name(f"{release.name} v{release.version}", fmt, "zip")
        )
        _audit_download(request, release, fmt)
        return response


def _audit_download(request, release: Release, fmt: str) -> None:
    """The audit trail's entry of a release download: which release (by its label) and which format."""
    audit_access(
        action="export_download", actor=request.user, obj=release, detail=fmt, request=request,
        extra={"name": release.label},
    )  # fmt: skip


def _labelled(rows: list[dict]) -> list[dict]:
    """Table 1 rows with the QA type as people read it."""
    # A stored report comes back from jsonb with its keys re-ordered: put the types back in the paper's order.
    order = [t.value for t in CLINIQLINK_TYPES]
    rank = {qa_type: n for n, qa_type in enumerate(order)} | {"total": len(order) + 1}
    rows = sorted(rows, key=lambda row: (rank.get(row["qa_type"], len(order)), row["qa_type"]))
    return [row | {"label": "Total" if row["qa_type"] == "total" else qa_type_label(row["qa_type"])} for row in rows]


def _without(query, key: str) -> str:
    """The query string with ``key`` left out (the way back from the confirmation to the filled form)."""
    query = query.copy()
    query.pop(key, None)
    return query.urlencode()


def _with_rule_text(releases) -> list[Release]:
    releases = list(releases)
    for release in releases:
        release.rule_text = rule_description(release.rule)
    return releases


def _release_or_404(label: str) -> Release:
    try:
        return release_get(label)
    except (DomainError, ValueError) as exc:
        raise Http404(str(exc)) from exc
