"""Progress of work that runs in one transaction (an import, all or nothing) is seen while the work runs, not only
when it commits; and writing it never waits for the work's own transaction."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.db import connection, transaction

from portal.jobs import Progress, job_create, job_run
from portal.models import Job

pytestmark = pytest.mark.django_db(transaction=True)

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "cliniqlink-sample"


def _seen_from_another_connection(job_id) -> tuple[int, int, str]:
    """The job's progress as the job page would read it now (another thread, so another connection)."""
    seen: dict = {}

    def read() -> None:
        try:
            job = Job.objects.get(pk=job_id)
            seen["row"] = (job.progress_done, job.progress_total, job.message)
        finally:
            connection.close()

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(30)
    return seen["row"]


def test_progress_written_inside_a_transaction_is_seen_before_it_commits(organizer):
    job = job_create(kind="import_items", params={}, user=organizer)
    progress = Progress(job)
    with transaction.atomic():
        progress.start(10, "importing items")
        progress.advance(4, "importing items")
        progress.note("importing items: second file")
        assert _seen_from_another_connection(job.pk) == (4, 10, "importing items: second file")


def test_progress_of_a_job_whose_row_the_transaction_holds_is_written_there_without_waiting(organizer):
    job = job_create(kind="import_items", params={}, user=organizer)
    progress = Progress(job)
    with transaction.atomic():
        Job.objects.filter(pk=job.pk).update(message="held by this transaction")
        progress.start(7, "stage one")  # would wait for ever for this very transaction if it waited
        assert Job.objects.get(pk=job.pk).progress_total == 7
    assert Job.objects.get(pk=job.pk).message == "stage one"


def test_an_import_job_shows_its_progress_while_its_transaction_is_open(organizer, monkeypatch):
    from annotation.services import import_rows
    from annotation.services.imports import items_import

    job = job_create(kind="import_items", params={}, user=organizer)
    seen: list[tuple[int, int, str]] = []
    real_write = import_rows.ItemWriter.write

    def write_and_look(self, chunk):
        real_write(self, chunk)
        seen.append(_seen_from_another_connection(job.pk))

    monkeypatch.setattr(import_rows.ItemWriter, "write", write_and_look)
    monkeypatch.setattr(Progress, "__init__", _unthrottled(Progress.__init__))
    job_run(job.pk, lambda job, progress: {"created": items_import(paths=[SAMPLE], progress=progress).created})
    assert seen and seen[-1][0] > 0, seen  # records counted while the import's transaction was still open
    assert Job.objects.get(pk=job.pk).status == Job.Status.SUCCEEDED


def _unthrottled(init):
    def wrapper(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.min_interval = 0.0

    return wrapper
