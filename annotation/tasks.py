"""Celery tasks of the annotation app: ids in, one service call, progress on the job record."""

from pathlib import Path

from celery import shared_task
from django.urls import reverse

from annotation.models import ImportBatch
from annotation.services.imports import by_type_phrase, items_import, sources_import
from annotation.services.nuggets import nugget_tasks_expire
from annotation.services.queue import assignments_expire
from annotation.services.reliability import reliability_fit, reliability_fit_request, reliability_refit_due
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


def _reliability_sentences(result: dict, params: dict) -> list[str]:
    if not result.get("fit_id"):
        return ["Nothing to fit yet: no review, adjudication or gold answer is stored."]
    return [
        f"The reliability model was fitted to {count_phrase(int(result['labels']), 'judgement', 'judgements')} on "
        f"{count_phrase(int(result['items']), 'item', 'items')} in {float(result['seconds']):.1f} s."
    ]


@job_task(
    kind="reliability_fit",
    label="Fit the reviewers' reliability model",
    links=lambda result, params: [("Reviewers' reliability", reverse("reliability"))],
    describe=_reliability_sentences,
)
def reliability_fit_task(job_id: str) -> None:
    def work(job, progress):
        fitted = reliability_fit(job=job, progress=progress)
        if fitted is None:
            return {"fit_id": None}
        return {"fit_id": fitted.pk, "labels": fitted.n_labels, "items": fitted.n_items, "seconds": fitted.seconds}

    job_run(job_id, work)


@shared_task
def reliability_refit_task() -> bool:
    """Periodic: a fit once ``RELIABILITY_REFIT_EVERY`` reviews have been stored since the last one."""
    if not reliability_refit_due():
        return False
    reliability_fit_request()
    return True
