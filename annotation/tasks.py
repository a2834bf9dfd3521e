"""Celery tasks of the annotation app: ids in, one service call, progress on the job record."""

from pathlib import Path

from celery import shared_task
from django.urls import reverse

from annotation.services.imports import items_import, sources_import
from annotation.services.nuggets import nugget_tasks_expire
from annotation.services.queue import assignments_expire
from portal.job_kinds import job_task
from portal.jobs import job_run


def _imported_items_links(result: dict, params: dict) -> list[tuple[str, str]]:
    if not result.get("batch_id"):
        return []
    return [("The items of this import", f"{reverse('item_list')}?batch={int(result['batch_id'])}")]


@job_task(kind="import_items", label="Import items", links=_imported_items_links)
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
        return result.as_dict()

    job_run(job_id, work)


@job_task(
    kind="import_sources",
    label="Import source passages",
    links=lambda result, params: [("Items and their excerpts", reverse("item_list"))],
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
