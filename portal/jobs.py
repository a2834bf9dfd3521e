"""Job records: create, run with progress, fail with a readable error.

A Celery task calls :func:`job_run` with the job id and a function of ``(job, progress)``. Progress writes are
throttled (at most every 0.3 s) so a tight loop does not hammer the database, and the final state is always
written. Running a job twice (a redelivered task) is safe as long as the work function is idempotent.

A job split across tasks (a scoring run encoded in chunks by several workers): the first task's work returns
:data:`CONTINUES` (the job stays running), each part runs under :func:`job_part` (skipped once the job has
finished, failing the job if it raises), and the last task calls ``job_run(..., resume=True)``, which finishes
the job without counting a new attempt.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import contextmanager

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


#: Returned by a work function whose job goes on in other tasks: the job stays running.
CONTINUES = "continues"


def job_run(job_id, work: Callable[[Job, Progress], dict | str | None], *, resume: bool = False) -> Job:
    """Run ``work`` for the job, recording start, progress, result or error.

    ``resume``: the job was started by an earlier task and goes on here (no new attempt, same start time);
    nothing is done if it has failed meanwhile.
    """
    job = Job.objects.get(pk=job_id)
    if job.status == Job.Status.SUCCEEDED or (resume and job.status == Job.Status.FAILED):
        return job  # a redelivered task after the end: nothing to do
    if not resume:
        Job.objects.filter(pk=job.pk).update(
            status=Job.Status.RUNNING, started_at=timezone.now(), attempts=job.attempts + 1, error=""
        )
        job.refresh_from_db()
    progress = Progress(job)
    with _failures_recorded(job):
        result = work(job, progress) or {}
        if result != CONTINUES:
            _finish(job, Job.Status.SUCCEEDED, result=result, done=progress.total or progress.done)
    job.refresh_from_db()
    return job


def job_part(job_id, work: Callable[[Job], None]) -> bool:
    """Run one part of a job split across tasks; False (nothing run) once the job has finished."""
    job = Job.objects.get(pk=job_id)
    if job.finished:
        return False
    with _failures_recorded(job):
        work(job)
    return True


@contextmanager
def _failures_recorded(job: Job):
    """A DomainError fails the job with its message; anything else is logged, recorded and re-raised."""
    try:
        yield
    except DomainError as exc:
        _finish(job, Job.Status.FAILED, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - recorded for the person watching the job, then re-raised
        logger.exception("job %s (%s) failed", job.pk, job.kind)
        _finish(job, Job.Status.FAILED, error=f"Internal error: {exc.__class__.__name__}: {exc}")
        raise


def _finish(job: Job, status: str, *, error: str = "", result: dict | None = None, done: int | None = None):
    fields = {"status": status, "finished_at": timezone.now(), "error": error}
    if result is not None:
        fields["result"] = result
    if done is not None:
        fields["progress_done"] = done
    Job.objects.filter(pk=job.pk).update(**fields)
