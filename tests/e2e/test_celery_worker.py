"""A real redis-server and a real Celery worker process run the portal's jobs end to end."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from annotation.models import QAItem
from annotation.tasks import import_items_task
from portal.jobs import job_create
from portal.models import Job

from .conftest import wait_until

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _wait_finished(job: Job, worker, timeout: float = 120) -> Job:
    def finished():
        job.refresh_from_db()
        return job.finished

    try:
        wait_until(finished, timeout, what=f"job {job.kind}")
    except AssertionError:
        raise AssertionError(f"job {job.kind} did not finish; worker log:\n{worker.log()[-4000:]}") from None
    return job


def test_import_job_runs_in_a_real_worker_through_redis(worker_factory, organizer):
    worker = worker_factory()
    job = job_create(
        kind="import_items", params={"paths": [str(ROOT / "fixtures" / "cliniqlink-sample")]}, user=organizer
    )
    import_items_task.delay(str(job.pk))
    job = _wait_finished(job, worker)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.result["created"] == 35 and job.attempts == 1
    assert (job.progress_done, job.progress_total) == (35, 35)
    assert job.started_at and job.finished_at and job.started_at <= job.finished_at
    assert QAItem.objects.count() == 35
    assert "import_items_task" in worker.log()


def test_a_job_whose_message_the_broker_lost_is_queued_again_and_runs(broker, worker_factory, organizer):
    """Redis restarted without persistence (here: FLUSHALL) after the job was queued: no worker will ever see the
    message; the recovery sweep (run by beat, here called directly) queues it again and a real worker runs it."""
    import redis

    from annotation.services.imports import import_request
    from portal.jobs import jobs_recover

    sample = ROOT / "fixtures" / "cliniqlink-sample"
    job = import_request(kind="items", paths=[sample], displays={str(sample): "cliniqlink-sample"}, user=organizer)
    client = redis.Redis.from_url(broker)
    assert client.llen("celery") == 1  # the message is in the queue...
    client.flushall()  # ...and gone
    assert client.llen("celery") == 0

    report = jobs_recover(stale_after=timedelta(0))
    assert report.requeued == [str(job.pk)]
    assert client.llen("celery") == 1
    worker = worker_factory()
    job = _wait_finished(job, worker)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.attempts == 1 and QAItem.objects.count() == 35
