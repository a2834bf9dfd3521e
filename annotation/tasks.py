"""Celery tasks of the annotation app: ids in, one service call, progress on the job record."""

from pathlib import Path

from celery import shared_task
from django.urls import reverse

from annotation.models import ImportBatch
from annotation.services.imports import by_type_phrase, items_import, sources_import
from annotation.services.nuggets import nugget_tasks_expire
from annotation.services.queue import assignments_expire
from portal.job_kinds import count_phrase, job_task, words_list
from portal.jobs import job_run


def _imported_items_links(result: dict, params: dict) -> list[tuple[str, str]]:
    if not result.get("batch_id"):
        return []
    return [("The items of this import", f"{reverse('item_list')}?batch={int(result['batch_id'])}")]


def _files_sentence(files: list[str]) -> str:
    if not files:
        return ""
    shown = files if len(files) <= 8 else [*files[:7], f"{len(files) - 7} more files"]
    return f"Read from {words_list(shown)}."


def _imported_items_sentences(result: dict, params: dict) -> list[str]:
    created, existing = int(result["created"]), int(result["existing"])
    given = params.get("batch_name", "")
    sentences = []
    if created:
        kinds = by_type_phrase(result.get("by_type") or {})
        sentences.append(f"{count_phrase(created, 'item', 'items')} imported{f' ({kinds})' if kinds else ''}.")
        if existing:
            sentences.append(f"{count_phrase(existing, 'item was', 'items were')} already here and left as they were.")
        name = result.get("batch_name")
        if name:
            named = "" if given else ", named after its files"
            sentences.append(f"{'It forms' if created == 1 else 'They form'} the batch “{name}”{named}.")
    elif existing:
        everything = "the item was" if existing == 1 else f"all {existing:,} items were"
        sentences.append(f"Nothing new: {everything} already here.")
        if given:
            sentences.append(f"No batch “{given}” was made, since no item was new.")
    else:
        sentences.append("The files held no items.")
    files = _files_sentence(list(result.get("files") or []))
    return [*sentences, files] if files else sentences


@job_task(
    kind="import_items",
    label="Import items",
    links=_imported_items_links,
    describe=_imported_items_sentences,
    progress_text=lambda message, done, total: f"{done:,} of {total:,} items read",
)
def import_items_task(job_id: str) -> None:
    def work(job, progress):
        params = job.params
        displays = {Path(p): name for p, name in params.get("displays", {}).items()}
        result = items_import(
            paths=[Path(p) for p in params["paths"]],
            fmt=params.get("format", "cliniqlink"),
            user=job.created_by,
            batch_name=params.get("batch_name", ""),
            progress=progress,
            displays=displays,
        )
        # The batch's name as stored (the files' names when none was given), for the sentence on the job page.
        named = ImportBatch.objects.filter(pk=result.batch_id).values_list("name", flat=True).first()
        return {**result.as_dict(), "batch_name": named or ""}

    job_run(job_id, work)


def _imported_sources_sentences(result: dict, params: dict) -> list[str]:
    created, updated, linked = int(result["created"]), int(result["updated"]), int(result["items_linked"])
    if not created and not updated:
        return ["The files held no source passages."]
    changes = [f"{count_phrase(created, 'new source passage', 'new source passages')}"] if created else []
    if updated:
        changes.append(f"{count_phrase(updated, 'passage', 'passages')} already here updated from the files")
    linking = (
        f"{count_phrase(linked, 'item', 'items')} newly linked to {'its' if linked == 1 else 'their'} passage."
        if linked
        else "No item needed a new link to its passage."
    )
    return [f"{words_list(changes)}.", linking]


@job_task(
    kind="import_sources",
    label="Import source passages",
    links=lambda result, params: [("Items and their excerpts", reverse("item_list"))],
    describe=_imported_sources_sentences,
)
def import_sources_task(job_id: str) -> None:
    def work(job, progress):
        params = job.params
        if "path" in params:  # a job queued before uploads of several files were accepted
            params = {"paths": [params["path"]], "displays": {params["path"]: params.get("display", "")}}
        progress.start(1, "importing passages")
        result = sources_import(
            paths=[Path(p) for p in params["paths"]], user=job.created_by, displays=params["displays"]
        )
        progress.advance(1)
        return result

    job_run(job_id, work)


@shared_task(acks_late=True)
def assignments_expire_task() -> int:
    """End expired review leases (safe to run any time; the queue also treats expired leases as free)."""
    return assignments_expire()


@shared_task(acks_late=True)
def nugget_tasks_expire_task() -> int:
    """End nugget leases that ran out (safe to run any time; the nugget queue also treats them as free)."""
    return nugget_tasks_expire()
