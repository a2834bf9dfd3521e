"""HTML pages of the annotation app: item browser, item page, import upload."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.views import View

from annotation.forms.items import ItemFilterForm, ItemImportForm
from annotation.selectors.adjudication import item_story
from annotation.selectors.items import batch_list, item_list
from annotation.selectors.nuggets import item_nugget_versions
from annotation.services.blinding import item_page_open
from annotation.services.imports import import_request
from annotation.views.review import RefusalPageMixin
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
        story = item_story(request.user, item, with_gold=True)
        return render(
            request,
            "annotation/item_detail.html",
            {"item": item, "story": story, "nugget_versions": item_nugget_versions(item)},
        )


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
