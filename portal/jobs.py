"""Job records: create, run with progress, fail with a readable error.

A Celery task calls :func:`job_run` with the job id and a function of ``(job, progress)``. Progress writes are
throttled (at most every 0.3 s) so a tight loop does not hammer the database, and the final state is always
written. Running a job twice (a redelivered task) is safe as long as the work function is idempotent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from portal.errors import DomainError
from portal.models import Job

logger = logging.getLogger(__name__)


class Progress:
    """Progress reporter handed to work functions; also drives a tqdm bar when given one."""

    def __init__(self, job: Job | None = None, *, bar=None, min_interval: float = 0.3):
        self.job = job
        self.bar = bar
        self.min_interval = min_interval
        self._last_write = 0.0
        self.done = 0
        self.total = 0

    def start(self, total: int, message: str = "") -> None:
        self.total, self.done = total, 0
        if self.bar is not None:
            self.bar.reset(total=total)
            if message:
                self.bar.set_description(message)
        self._write(message, force=True)

    def advance(self, n: int = 1, message: str = "") -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        self._write(message)

    def _write(self, message: str = "", *, force: bool = False) -> None:
        if self.job is None:
            return
        now = time.monotonic()
        if not force and now - self._last_write < self.min_interval and self.done < self.total:
            return
        self._last_write = now
        fields = {"progress_done": self.done, "progress_total": self.total}
        if message:
            fields["message"] = message[:300]
        Job.objects.filter(pk=self.job.pk).update(**fields)


def job_create(*, kind: str, params: dict, user=None) -> Job:
    return Job.objects.create(kind=kind, params=params, created_by=user if getattr(user, "pk", None) else None)


def job_enqueue(job: Job, task) -> None:
    """Queue ``task(job.id)`` once the current transaction commits (never before the row exists)."""
    transaction.on_commit(lambda: task.delay(str(job.pk)))


def job_run(job_id, work: Callable[[Job, Progress], dict | None]) -> Job:
    """Run ``work`` for the job, recording start, progress, result or error."""
    job = Job.objects.get(pk=job_id)
    if job.status == Job.Status.SUCCEEDED:
        return job  # a redelivered task after success: nothing to do
    Job.objects.filter(pk=job.pk).update(
        status=Job.Status.RUNNING, started_at=timezone.now(), attempts=job.attempts + 1, error=""
    )
    job.refresh_from_db()
    progress = Progress(job)
    try:
        result = work(job, progress) or {}
    except DomainError as exc:
        _finish(job, Job.Status.FAILED, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - recorded for the person watching the job, then re-raised
        logger.exception("job %s (%s) failed", job.pk, job.kind)
        _finish(job, Job.Status.FAILED, error=f"Internal error: {exc.__class__.__name__}: {exc}")
        raise
    else:
        _finish(job, Job.Status.SUCCEEDED, result=result, done=progress.total or progress.done)
    job.refresh_from_db()
    return job


def _finish(job: Job, status: str, *, error: str = "", result: dict | None = None, done: int | None = None):
    fields = {"status": status, "finished_at": timezone.now(), "error": error}
    if result is not None:
        fields["result"] = result
    if done is not None:
        fields["progress_done"] = done
    Job.objects.filter(pk=job.pk).update(**fields)
