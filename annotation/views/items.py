"""HTML pages of the annotation app: item browser, item page, import upload."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views import View

from annotation.forms.items import ItemDisputeForm, ItemFilterForm, ItemImportForm
from annotation.forms.vetting import GoldForm
from annotation.models import QAItem
from annotation.selectors.adjudication import item_adjudication_blocked, item_story
from annotation.selectors.items import batch_list, item_judgements, item_list
from annotation.selectors.nuggets import item_nugget_versions
from annotation.services.adjudication import may_decide
from annotation.services.blinding import item_page_open
from annotation.services.disputes import dispute_file
from annotation.services.gold import gold_mark, gold_unmark
from annotation.services.imports import import_request
from annotation.services.judgement_exports import judgements_download
from annotation.views.review import RefusalPageMixin
from annotation.workflow import ItemStatus, Verdict
from portal.audit import audit_access
from portal.downloads import attachment_header
from portal.errors import DomainError
from portal.importing import ImportProblem
from portal.permissions import RoleRequiredMixin
from portal.roles import Role
from portal.uploads import save_uploads


class ItemListView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        form = ItemFilterForm(request.GET or None)
        filters = form.cleaned_data if form.is_valid() else {}
        items = item_list(
            qa_type=filters.get("qa_type", ""),
            status=filters.get("status", ""),
            batch=filters.get("batch"),
            q=filters.get("q", ""),
            excerpt=filters.get("excerpt", ""),
        )
        page = Paginator(items, 50).get_page(request.GET.get("page"))
        query = request.GET.copy()
        query.pop("page", None)
        return render(
            request,
            "annotation/item_list.html",
            {
                "form": form,
                "page": page,
                "batches": batch_list()[:50],
                "query": query.urlencode(),
                "searched": filters.get("q", ""),
            },
        )


class ItemDetailView(RefusalPageMixin, RoleRequiredMixin, View):
    """Organizers' item page with its history; refused (403) to an organizer conflicted on the item. Whoever opens it
    read the item's reviews and answer, so is not given the item to review afterwards, nor its question to rank."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, uid):
        item = item_page_open(user=request.user, uid=uid, where="item page")
        # The page lists the item's reviews with their reviewers' names.
        audit_access(action="identities_viewed", actor=request.user, obj=item, detail="item page", request=request)
        return self._render(request, item)

    def _render(self, request, item, *, gold_form=None, dispute_form=None, status=200):
        return render(
            request,
            "annotation/item_detail.html",
            {
                "item": item,
                "story": item_story(request.user, item, with_gold=True),
                "nugget_versions": item_nugget_versions(item),
                **item_judgements(request.user, item),
                "gold_form": gold_form or GoldForm(initial={"uid": item.uid}),
                "dispute_form": dispute_form or ItemDisputeForm(),
                # The item stores the verdict's value; its words are the workflow's labels.
                "final_verdict_label": Verdict(item.final_verdict).label if item.final_verdict else "",
                "may_decide": may_decide(request.user, item),
                "reassign_open": item.status == ItemStatus.IN_ADJUDICATION and item_adjudication_blocked(item),
            },
            status=status,
        )

    def post(self, request, uid):
        """The page's actions, each through its service: mark gold or change it, stop handing it out, open a
        dispute. A refusal is shown on the page with what was typed."""
        item = item_page_open(user=request.user, uid=uid, where="item page")
        action = request.POST.get("action", "")
        try:
            if action == "gold_unmark" and hasattr(item, "gold"):
                gold_unmark(gold=item.gold, by=request.user)
                messages.success(request, "Gold item no longer handed out.")
            elif action == "gold_mark":
                form = GoldForm(request.POST)
                if not form.is_valid():
                    return self._render(request, item, gold_form=form, status=400)
                gold_mark(
                    item=item,
                    expected_verdict=form.cleaned_data["expected_verdict"],
                    by=request.user,
                    planted_error=form.cleaned_data["planted_error"],
                    note=form.cleaned_data["note"],
                )
                messages.success(request, "The item is a gold item.")
            elif action == "dispute":
                form = ItemDisputeForm(request.POST)
                if not form.is_valid():
                    return self._render(request, item, dispute_form=form, status=400)
                dispute = dispute_file(
                    raised_by=request.user,
                    item=item,
                    category=form.cleaned_data["category"],
                    text=form.cleaned_data["text"],
                )
                messages.success(request, "Dispute opened; the item is held until it is resolved.")
                return redirect("dispute_detail", pk=dispute.pk)
            else:
                messages.error(request, "Nothing was done: unknown action.")
        except DomainError as exc:
            messages.error(request, f"Not done: {exc}")
            return self._render(request, QAItem.objects.get(pk=item.pk), status=exc.http_status)
        return redirect("item_detail", uid=item.uid)


class JudgementExportView(RoleRequiredMixin, View):
    """One table of the judgement export (judgements or disputes) as a download; pseudonymised unless
    ``identities=1``. Audited by the service, as every export of people's judgements."""

    required_roles = (Role.ORGANIZER,)

    def get(self, request, table, fmt):
        try:
            data, name, content_type = judgements_download(
                table=table, fmt=fmt, identities=request.GET.get("identities") == "1", user=request.user
            )
        except DomainError as exc:
            raise Http404(str(exc)) from exc
        response = HttpResponse(data, content_type=content_type)
        response["Content-Disposition"] = attachment_header(name)
        return response


class ImportView(RoleRequiredMixin, View):
    required_roles = (Role.ORGANIZER,)

    def get(self, request):
        return render(request, "annotation/import.html", {"form": ItemImportForm()})

    def post(self, request):
        form = ItemImportForm(request.POST, request.FILES)
        if not form.is_valid():
            return render(request, "annotation/import.html", {"form": form}, status=400)
        try:
            paths, displays = save_uploads(form.cleaned_data["files"])
        except ImportProblem as exc:
            messages.error(request, str(exc))
            return render(request, "annotation/import.html", {"form": form}, status=400)
        data = form.cleaned_data
        job = import_request(
            kind=data["kind"],
            paths=paths,
            displays=displays,
            fmt=data["format"] or "cliniqlink",
            batch_name=data["batch_name"],
            user=request.user,
        )
        return redirect("job", job_id=job.pk)
