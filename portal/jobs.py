"""Job records: started by kind, run with progress, failed with a readable error.

Services start a job with :func:`job_start` and its kind alone (they never import a task, so tasks may import
services at the top); the task and the title of each kind come from :mod:`portal.job_kinds`.

A Celery task calls :func:`job_run` with the job id and a function of ``(job, progress)``. Progress writes are
throttled (at most every 0.3 s) so a tight loop does not hammer the database, and the final state is always
written. Running a job twice (a redelivered task) is safe as long as the work function is idempotent.

A job split across tasks (a scoring run encoded in chunks by several workers): the first task's work returns
:data:`CONTINUES` (the job stays running), each part runs under :func:`job_part` (skipped once the job has
finished, failing the job if it raises), and the last task calls ``job_run(..., resume=True)``, which finishes
the job without counting a new attempt.

Lost work. With late acknowledgement the broker redelivers a task whose worker died (after the visibility
timeout); a job that died ``JOB_MAX_ATTEMPTS`` times is then failed rather than run again. A message the broker
itself lost (Redis restarted without persistence, a flushed queue) would leave its job "queued" or "running" for
ever: :func:`jobs_recover` (a periodic task) queues such jobs again once they have shown no sign of life for
``JOB_STALE_SECONDS``.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.db import connection, transaction
from django.db.models import Count, F, QuerySet
from django.db.models.functions import Coalesce
from django.urls import NoReverseMatch
from django.utils import timezone

from portal.actors import acting_user
from portal.audit import audit_record
from portal.errors import DomainError
from portal.job_kinds import job_kind, job_kind_or_none
from portal.models import Job, User
from portal.roles import can_organize

#: A job's id as tasks receive it (a string in the message) or as the row holds it.
JobId = str | UUID

logger = logging.getLogger(__name__)


class Progress:
    """Progress reporter handed to work functions; also drives a tqdm bar when given one."""

    def __init__(self, job: Job | None = None, *, bar: Any = None, min_interval: float = 0.3) -> None:
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

    def estimate(self, total: int) -> None:
        """A better estimate of the total, for work whose size is known only as it goes (a streamed import)."""
        self.total = total
        if self.bar is not None:
            self.bar.total = total
            self.bar.refresh()

    def advance(self, n: int = 1, message: str = "") -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        self._write(message)

    def note(self, message: str) -> None:
        """Say which stage the work is in now ("agreement: type 3 of 7"); written at once, whatever the throttle,
        so a long stage shows its name for as long as it runs."""
        if self.bar is not None:
            self.bar.set_description(message)
        self._write(message, force=True)

    def _write(self, message: str = "", *, force: bool = False) -> None:
        if self.job is None:
            return
        now = time.monotonic()
        if not force and now - self._last_write < self.min_interval and self.done < self.total:
            return
        self._last_write = now
        fields = {"progress_done": self.done, "progress_total": self.total, "heartbeat_at": timezone.now()}
        if message:
            fields["message"] = message[:300]
        if connection.in_atomic_block and _progress_beside(self.job.pk, fields):
            return
        Job.objects.filter(pk=self.job.pk).update(**fields)


# Work that runs in one transaction (an import, all or nothing) would write its progress into that transaction too,
# where nobody sees it until the end. Such writes go through a short connection of their own, in autocommit (a few
# milliseconds, at most a few times a second: progress is throttled). They never wait: if the work's own
# transaction holds the job's row (a job run inside a caller's transaction that already changed it), or the row is
# not committed yet, nothing is written there and the write goes into the transaction as before; waiting would be
# waiting for ourselves.
def _progress_beside(job_id: Any, fields: dict[str, Any]) -> bool:
    """Write ``fields`` to the job's row at once, outside the current transaction; False when that cannot be done
    without waiting (or at all), and the caller writes it in its transaction instead."""
    columns = {field.name: field.column for field in Job._meta.concrete_fields}
    assignments = ", ".join(f"{columns[name]} = %s" for name in fields)
    sql = (
        f"UPDATE {Job._meta.db_table} SET {assignments} WHERE id = "  # noqa: S608 - names from the model
        f"(SELECT id FROM {Job._meta.db_table} WHERE id = %s FOR UPDATE SKIP LOCKED)"
    )
    try:
        with psycopg.connect(**connection.get_connection_params(), autocommit=True) as side:
            return side.execute(sql, [*fields.values(), job_id]).rowcount == 1
    except psycopg.Error:
        logger.warning("job %s: progress written with the work's transaction (no second connection)", job_id)
        return False


def job_list(*, user: User, status: str = "", kind: str = "") -> QuerySet[Job]:
    """Jobs newest first: every job for organizers, a person's own jobs for anyone else."""

    jobs = Job.objects.select_related("created_by")
    if not (can_organize(user) or user.is_superuser):
        jobs = jobs.filter(created_by=user)
    if status:
        jobs = jobs.filter(status=status)
    if kind:
        jobs = jobs.filter(kind__startswith=kind)  # "report" matches every "report:<kind>"
    return jobs.order_by("-created_at")


def job_counts(*, since: datetime) -> dict[str, int]:
    """Jobs per status created since ``since`` (the organizer's home page)."""
    rows = Job.objects.filter(created_at__gte=since).values("status").annotate(n=Count("pk"))
    return {row["status"]: row["n"] for row in rows}


def job_outputs(job: Job) -> list[tuple[str, str]]:
    """(link text, URL) of what a finished job produced: the imported batch's items, the report, the scoring
    runs, as its kind's ``links`` name them (the apps above the kernel declare their own pages)."""
    entry = job_kind_or_none(job.kind)
    if job.status != Job.Status.SUCCEEDED or entry is None or entry.links is None:
        return []
    result = job.result if isinstance(job.result, dict) else {}
    params = job.params if isinstance(job.params, dict) else {}
    try:
        return entry.links(result, params)
    except (NoReverseMatch, TypeError, ValueError):
        return []  # a page that does not exist in this deployment, or a parameter of another shape: no link


def job_failure_seen(*, job: Job) -> bool:
    """An organizer has read why ``job`` failed (its page, or the home page's "Open it" / "Dismiss"): the home page
    stops reminding of it; the jobs page keeps it. True if this was the first time."""
    return bool(
        Job.objects.filter(pk=job.pk, status=Job.Status.FAILED, dismissed_at=None).update(dismissed_at=timezone.now())
    )


def job_create(*, kind: str, params: dict, user: User | AnonymousUser | None = None) -> Job:
    """A queued job record of a registered kind, not queued to a worker (see :func:`job_start`)."""
    job_kind(kind)
    return Job.objects.create(kind=kind, params=params, created_by=acting_user(user))


def job_start(*, kind: str, params: dict, user: User | AnonymousUser | None = None) -> Job:
    """Create a job of ``kind`` and queue its registered task once the current transaction commits (never
    before the row exists; never if the transaction rolls back). DomainError for a kind nobody registered."""
    task = job_kind(kind).task
    with transaction.atomic():
        job = job_create(kind=kind, params=params, user=user)
        _enqueue(job, task)
    return job


def job_part_enqueue(task: Any, job_id: JobId, *args: Any) -> None:
    """Queue ``task(job_id, *args)``, a further part of a job split across tasks, once the transaction commits."""
    transaction.on_commit(functools.partial(task.delay, str(job_id), *args))


def job_part_progress(job_id: JobId, *, done: int, message: str) -> None:
    """Count ``done`` more units of a split job's work, with a message and a sign of life. Parts run in several
    workers at once, so the count is added in the database rather than written."""
    Job.objects.filter(pk=job_id).update(
        progress_done=F("progress_done") + done, message=message[:300], heartbeat_at=timezone.now()
    )


def _enqueue(job: Job, task: Any) -> None:
    Job.objects.filter(pk=job.pk).update(task_name=task.name)
    transaction.on_commit(lambda: task.delay(str(job.pk)))


#: Returned by a work function whose job goes on in other tasks: the job stays running.
CONTINUES = "continues"


def job_run(job_id: JobId, work: Callable[[Job, Progress], dict | str | None], *, resume: bool = False) -> Job:
    """Run ``work`` for the job, recording start, progress, result or error.

    ``resume``: the job was started by an earlier task and goes on here (no new attempt, same start time);
    nothing is done if it has failed meanwhile.
    """
    job = Job.objects.get(pk=job_id)
    if job.status == Job.Status.SUCCEEDED or (resume and job.status == Job.Status.FAILED):
        return job  # a redelivered task after the end: nothing to do
    if not resume and job.status == Job.Status.RUNNING and job.attempts >= settings.JOB_MAX_ATTEMPTS:
        _give_up(job)  # every earlier attempt died with its worker: do not take down another one
        job.refresh_from_db()
        return job
    if not resume:
        now = timezone.now()
        Job.objects.filter(pk=job.pk).update(
            status=Job.Status.RUNNING,
            started_at=now,
            heartbeat_at=now,
            attempts=job.attempts + 1,
            error="",
            retryable=False,
        )
        job.refresh_from_db()
    progress = Progress(job)
    with _failures_recorded(job):
        result = work(job, progress) or {}
        if isinstance(result, dict):  # else CONTINUES: the job's last part finishes it
            _finish(job, Job.Status.SUCCEEDED, result=result, done=progress.total or progress.done)
    job.refresh_from_db()
    return job


def job_part(job_id: JobId, work: Callable[[Job], None]) -> bool:
    """Run one part of a job split across tasks; False (nothing run) once the job has finished."""
    job = Job.objects.get(pk=job_id)
    if job.finished:
        return False
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now())
    with _failures_recorded(job):
        work(job)
    return True


@dataclass
class Recovery:
    """What :func:`jobs_recover` did: job ids queued again, and those given up on."""

    requeued: list[str] = field(default_factory=list)
    abandoned: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"requeued": self.requeued, "abandoned": self.abandoned}


def jobs_recover(*, stale_after: timedelta | None = None, now: datetime | None = None) -> Recovery:
    """Queue again the unfinished jobs that have shown no sign of life for ``stale_after``.

    Such a job's task was lost by the broker: a task whose worker died is redelivered by the broker itself
    before ``JOB_STALE_SECONDS`` (the default) have passed, and a running task writes progress. Queuing it again
    (the task registered for its kind) is safe because every job's work is idempotent (it may already have been
    redelivered). A running job whose attempts reached ``JOB_MAX_ATTEMPTS`` is failed instead, and so is a job
    of a kind this version no longer has. Jobs run in the calling process (no task name) are left alone. Safe
    to run from several places at once: each job is taken under a row lock, others skip it.
    """
    now = now or timezone.now()
    stale_after = timedelta(seconds=settings.JOB_STALE_SECONDS) if stale_after is None else stale_after
    report = Recovery()
    candidates = (
        Job.objects.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
        .exclude(task_name="")
        .alias(last_seen=Coalesce("heartbeat_at", "created_at"))
        .filter(last_seen__lt=now - stale_after)
        .values_list("pk", flat=True)
    )
    for pk in list(candidates):
        with transaction.atomic():
            job = Job.objects.select_for_update(skip_locked=True).filter(pk=pk).first()
            if job is None or job.finished:
                continue
            last_seen = job.heartbeat_at or job.created_at
            if last_seen >= now - stale_after:
                continue  # it moved since the candidates were listed
            task = _registered_task(job)
            if job.status == Job.Status.RUNNING and job.attempts >= settings.JOB_MAX_ATTEMPTS:
                _give_up(job)
                report.abandoned.append(str(job.pk))
            elif task is None:
                _finish(job, Job.Status.FAILED, error=f"Internal error: no task runs jobs of kind {job.kind!r} any "
                        "more; start the job again.")  # fmt: skip
                report.abandoned.append(str(job.pk))
            else:
                Job.objects.filter(pk=job.pk).update(
                    task_name=task.name,
                    heartbeat_at=now,
                    message=f"queued again: no sign of life since {last_seen:%Y-%m-%d %H:%M %Z} (its task was lost)",
                )
                transaction.on_commit(functools.partial(task.delay, str(job.pk)))
                report.requeued.append(str(job.pk))
                logger.warning("job %s (%s) showed no sign of life since %s: queued again", job.pk, job.kind,
                               last_seen)  # fmt: skip
    return report


def job_retry(*, job: Job, by: User) -> Job:
    """Run a failed job again from the start, e.g. after the cause of a worker crash has been fixed.

    Only jobs that failed for a reason other than their input (``retryable``): a bad upload would fail the same
    way, and is mended by uploading a corrected file. The attempts count starts again from zero.
    """
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.status != Job.Status.FAILED or not job.retryable:
            raise DomainError(
                "Only a job that failed for a reason other than its input can be run again; this one is "
                f"{job.status}{' (its input was refused: correct it and start a new job)' if job.status == Job.Status.FAILED else ''}.",
                code="not_retryable",
            )
        if not job.task_name:
            raise DomainError("This job was run in the web process and cannot be queued again.", code="not_retryable")
        task = _registered_task(job)
        if task is None:
            raise DomainError(
                f"No task runs jobs of kind {job.kind!r} any more, so this job cannot be queued again.",
                code="not_retryable",
            )
        if job.uploads_deleted_at or not all(folder.is_dir() for folder in job.upload_folders()):
            deleted = f" on {job.uploads_deleted_at:%Y-%m-%d}" if job.uploads_deleted_at else ""
            raise DomainError(
                f"The files uploaded for this job were deleted{deleted}, {settings.PORTAL_UPLOAD_RETENTION_DAYS} "
                "day(s) after it ended (PORTAL_UPLOAD_RETENTION_DAYS), so it cannot be run again: upload them again "
                "as a new job.",
                code="not_retryable",
            )
        audit_record(
            actor=by,
            obj=job,
            action="job_retried",
            before={"status": job.status, "error": job.error, "attempts": job.attempts},
            after={"status": Job.Status.QUEUED},
        )
        Job.objects.filter(pk=job.pk).update(
            task_name=task.name,
            status=Job.Status.QUEUED,
            error="",
            retryable=False,
            attempts=0,
            started_at=None,
            finished_at=None,
            progress_done=0,
            heartbeat_at=timezone.now(),
            message=f"queued again by {by}",
        )
        transaction.on_commit(lambda: task.delay(str(job.pk)))
    job.refresh_from_db()
    return job


def _registered_task(job: Job) -> Any:
    """The task registered for the job's kind, or None for a kind this version does not have."""
    entry = job_kind_or_none(job.kind)
    return entry.task if entry is not None else None


def _give_up(job: Job) -> None:
    _finish(
        job,
        Job.Status.FAILED,
        error=(
            f"Stopped after {job.attempts} attempts: the worker running this job stopped each time without an "
            "error (killed, out of memory, or restarted), so it is not run again. Start it again once the cause "
            "is fixed (the worker log says what happened)."
        ),
        retryable=True,
    )
    logger.error("job %s (%s) given up after %s attempts", job.pk, job.kind, job.attempts)


@contextmanager
def _failures_recorded(job: Job) -> Iterator[None]:
    """A DomainError fails the job with its message; anything else is logged, recorded and re-raised."""
    try:
        yield
    except DomainError as exc:
        _finish(job, Job.Status.FAILED, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - recorded for the person watching the job, then re-raised
        logger.exception("job %s (%s) failed", job.pk, job.kind)
        _finish(job, Job.Status.FAILED, error=f"Internal error: {exc.__class__.__name__}: {exc}", retryable=True)
        raise


def _finish(
    job: Job,
    status: str,
    *,
    error: str = "",
    result: dict | None = None,
    done: int | None = None,
    retryable: bool = False,
) -> None:
    fields: dict[str, Any] = {"status": status, "finished_at": timezone.now(), "error": error, "retryable": retryable}
    if result is not None:
        fields["result"] = result
    if done is not None:
        fields["progress_done"] = done
    Job.objects.filter(pk=job.pk).update(**fields)
