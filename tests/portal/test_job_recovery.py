"""Jobs whose task was lost: queued again after JOB_STALE_SECONDS without a sign of life; a job whose worker
keeps dying is failed after JOB_MAX_ATTEMPTS instead of being run again.

(Here tasks run in-process; ``tests/e2e/test_worker_faults.py`` loses a message in a real Redis.)
"""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import QAItem
from annotation.tasks import import_items_task
from portal.errors import DomainError
from portal.jobs import Progress, job_create, job_run, job_start, jobs_recover
from portal.models import AuditEntry, Job

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = str(ROOT / "fixtures" / "cliniqlink-sample")

pytestmark = pytest.mark.django_db


def _lost_import_job(organizer, *, minutes_ago: float, **fields) -> Job:
    """An import job queued ``minutes_ago`` whose message never reached a worker (the commit hook is dropped)."""
    job = job_start(kind="import_items", params={"paths": [SAMPLE]}, user=organizer)
    # This test's transaction never commits: the message is "lost".
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago), **fields)
    job.refresh_from_db()
    return job


def test_a_queued_job_whose_task_was_lost_is_queued_again_and_runs(
    organizer, settings, django_capture_on_commit_callbacks
):
    settings.JOB_STALE_SECONDS = 600
    job = _lost_import_job(organizer, minutes_ago=11)
    assert job.task_name == "annotation.tasks.import_items_task" and job.status == "queued"
    with django_capture_on_commit_callbacks(execute=True):
        report = jobs_recover()
    assert report.requeued == [str(job.pk)] and report.abandoned == []
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert job.attempts == 1 and job.result["created"] == 35
    assert QAItem.objects.count() == 35


def test_jobs_with_recent_life_finished_or_run_in_process_are_left_alone(
    organizer, settings, django_capture_on_commit_callbacks
):
    settings.JOB_STALE_SECONDS = 600
    fresh = _lost_import_job(organizer, minutes_ago=9)
    # Created long ago but running, with progress written a minute ago.
    busy = _lost_import_job(
        organizer, minutes_ago=120, status="running", attempts=1, heartbeat_at=timezone.now() - timedelta(minutes=1)
    )
    done = _lost_import_job(organizer, minutes_ago=120, status="succeeded", attempts=1)
    failed = _lost_import_job(organizer, minutes_ago=120, status="failed", attempts=1)
    in_process = _lost_import_job(organizer, minutes_ago=120, task_name="")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        report = jobs_recover()
    assert report.requeued == [] and report.abandoned == [] and callbacks == []
    statuses = dict(Job.objects.values_list("pk", "status"))
    assert [statuses[j.pk] for j in (fresh, busy, done, failed, in_process)] == [
        "queued",
        "running",
        "succeeded",
        "failed",
        "queued",
    ]
    assert QAItem.objects.count() == 0


def test_a_running_job_silent_for_too_long_is_run_again_as_a_new_attempt(
    organizer, settings, django_capture_on_commit_callbacks
):
    settings.JOB_STALE_SECONDS, settings.JOB_MAX_ATTEMPTS = 600, 3
    job = _lost_import_job(
        organizer, minutes_ago=60, status="running", attempts=2, heartbeat_at=timezone.now() - timedelta(minutes=30)
    )
    with django_capture_on_commit_callbacks(execute=True):
        report = jobs_recover()
    assert report.requeued == [str(job.pk)]
    job.refresh_from_db()
    assert job.status == "succeeded" and job.attempts == 3
    assert QAItem.objects.count() == 35


def test_a_job_whose_worker_died_max_attempts_times_is_failed_not_run(
    organizer, settings, django_capture_on_commit_callbacks
):
    settings.JOB_STALE_SECONDS, settings.JOB_MAX_ATTEMPTS = 600, 3
    job = _lost_import_job(organizer, minutes_ago=60, status="running", attempts=3)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        report = jobs_recover()
    assert report.abandoned == [str(job.pk)] and report.requeued == [] and callbacks == []
    job.refresh_from_db()
    assert job.status == "failed" and job.finished_at is not None and job.retryable
    assert job.error.startswith("Stopped after 3 attempts: the worker running this job stopped each time")
    assert QAItem.objects.count() == 0


def test_a_redelivered_task_of_a_job_that_keeps_killing_its_worker_gives_up(organizer, settings):
    """The broker's own redelivery (a worker SIGKILLed mid-job) counts attempts: the third death is the last."""
    settings.JOB_MAX_ATTEMPTS = 3
    job = _lost_import_job(organizer, minutes_ago=1, status="running", attempts=2)
    import_items_task(str(job.pk))  # attempt 3: runs
    job.refresh_from_db()
    assert job.status == "succeeded" and job.attempts == 3

    job = _lost_import_job(organizer, minutes_ago=1, status="running", attempts=3)
    import_items_task(str(job.pk))  # three attempts died already: not a fourth
    job.refresh_from_db()
    assert job.status == "failed" and job.attempts == 3 and "Stopped after 3 attempts" in job.error


def test_a_job_of_a_kind_that_no_longer_exists_fails_with_a_reason(organizer, settings):
    settings.JOB_STALE_SECONDS = 60
    job = _lost_import_job(organizer, minutes_ago=5, kind="import_retired")  # a kind an older version had
    report = jobs_recover()
    assert report.abandoned == [str(job.pk)]
    job.refresh_from_db()
    assert job.status == "failed" and "no task runs jobs of kind 'import_retired' any more" in job.error


def test_a_lost_job_is_queued_again_with_the_task_its_kind_has_now(
    organizer, settings, django_capture_on_commit_callbacks
):
    """The registry, not the stored task name, says which task runs a kind: a task renamed since the job was
    queued does not strand it."""
    settings.JOB_STALE_SECONDS = 60
    job = _lost_import_job(organizer, minutes_ago=5, task_name="annotation.tasks.renamed_task")
    with django_capture_on_commit_callbacks(execute=True):
        report = jobs_recover()
    assert report.requeued == [str(job.pk)]
    job.refresh_from_db()
    assert job.status == "succeeded" and job.task_name == import_items_task.name


def test_progress_and_start_are_signs_of_life(organizer):
    job = job_create(kind="import_items", params={}, user=organizer)
    assert job.heartbeat_at is None
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    before = timezone.now()
    progress = Progress(job)
    progress.start(10, "working")
    job.refresh_from_db()
    assert job.heartbeat_at >= before


def test_the_job_page_says_when_a_job_has_been_quiet(organizer, organizer_client, settings):
    settings.JOB_STALE_SECONDS = 5400
    job = _lost_import_job(
        organizer, minutes_ago=60, status="running", attempts=1, heartbeat_at=timezone.now() - timedelta(minutes=7)
    )
    page = organizer_client.get(f"/jobs/{job.pk}/").content.decode()
    assert "No progress for 7 minutes" in page
    assert "queued again by itself after 90 minutes without progress" in page
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now())
    assert "No progress" not in organizer_client.get(f"/jobs/{job.pk}/").content.decode()
    payload = organizer_client.get(f"/jobs/{job.pk}/?format=json").json()
    assert payload["attempts"] == 1 and payload["heartbeat_at"]


def test_jobs_recover_command(organizer, capsys):
    job = _lost_import_job(organizer, minutes_ago=3, status="running", attempts=5)
    out = StringIO()
    call_command("jobs_recover", "--stale-minutes", "2", stdout=out)
    assert f"failed (gave up): job {job.pk}" in out.getvalue()
    assert "0 job(s) queued again, 1 given up" in out.getvalue()
    job.refresh_from_db()
    assert job.status == "failed"


def test_only_failures_not_caused_by_the_input_may_be_run_again(organizer):
    def broken(job, progress):
        raise RuntimeError("worker lost its GPU")

    def refused(job, progress):
        raise DomainError("MC.json, record 3, field 'options': must be a list of strings")

    crashed = job_create(kind="import_items", params={}, user=organizer)
    with pytest.raises(RuntimeError):
        job_run(crashed.pk, broken)
    bad_input = job_create(kind="import_items", params={}, user=organizer)
    job_run(bad_input.pk, refused)
    crashed.refresh_from_db(), bad_input.refresh_from_db()
    assert crashed.status == bad_input.status == "failed"
    assert crashed.retryable and not bad_input.retryable


def test_a_failed_job_is_run_again_from_the_page_with_an_audit_entry(
    organizer, organizer_client, settings, django_capture_on_commit_callbacks
):
    job = _lost_import_job(organizer, minutes_ago=5, status="failed", attempts=3, retryable=True, error="Stopped")
    page = organizer_client.get(f"/jobs/{job.pk}/").content.decode()
    assert "Run this job again" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = organizer_client.post(f"/jobs/{job.pk}/retry/", follow=True)
    assert "The job is queued again." in response.content.decode()
    job.refresh_from_db()
    assert job.status == "succeeded" and job.attempts == 1 and not job.retryable and job.error == ""
    assert QAItem.objects.count() == 35
    entry = AuditEntry.objects.get(action="job_retried", object_id=str(job.pk))
    assert entry.actor == organizer and entry.before["attempts"] == 3 and entry.before["error"] == "Stopped"
    assert "Run this job again" not in organizer_client.get(f"/jobs/{job.pk}/").content.decode()


def test_a_job_refused_for_its_input_or_someone_elses_job_is_not_run_again(organizer, make_user, client):
    bad_input = _lost_import_job(organizer, minutes_ago=5, status="failed", attempts=1, error="MC.json, record 3")
    client.force_login(organizer)
    assert "Run this job again" not in client.get(f"/jobs/{bad_input.pk}/").content.decode()
    response = client.post(f"/api/jobs/{bad_input.pk}/retry/")
    assert response.status_code == 400 and response.json()["code"] == "not_retryable"
    page = client.post(f"/jobs/{bad_input.pk}/retry/", follow=True).content.decode()
    assert "its input was refused: correct it and start a new job" in page
    succeeded = _lost_import_job(organizer, minutes_ago=5, status="succeeded", attempts=1)
    response = client.post(f"/api/jobs/{succeeded.pk}/retry/")
    assert response.status_code == 400 and response.json()["detail"].endswith("this one is succeeded.")
    Job.objects.filter(pk=succeeded.pk).delete()
    crashed = _lost_import_job(organizer, minutes_ago=5, status="failed", attempts=1, retryable=True)
    client.force_login(make_user("reviewer", email="other@example.org"))
    assert client.post(f"/api/jobs/{crashed.pk}/retry/").status_code == 403
    assert client.post(f"/jobs/{crashed.pk}/retry/").status_code == 403
    statuses = set(Job.objects.values_list("status", flat=True))
    assert statuses == {"failed"} and not AuditEntry.objects.filter(action="job_retried").exists()


def test_the_api_runs_a_failed_job_again(organizer, client, django_capture_on_commit_callbacks):
    job = _lost_import_job(organizer, minutes_ago=5, status="failed", attempts=1, retryable=True)
    client.force_login(organizer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/jobs/{job.pk}/retry/")
    assert response.status_code == 202 and response.json()["status"] == "queued"
    job.refresh_from_db()
    assert job.status == "succeeded" and QAItem.objects.count() == 35
