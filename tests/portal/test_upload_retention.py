"""Uploaded files are deleted PORTAL_UPLOAD_RETENTION_DAYS after their job ends (refused ones too), by the daily
beat task or ``manage.py uploads_prune``; the job page says when; a job whose files are gone is not run again."""

from __future__ import annotations

import json
import os
import re
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from annotation.models import QAItem
from annotation.tasks import import_items_task
from portal.errors import DomainError
from portal.jobs import job_create, job_retry
from portal.models import Job
from portal.uploads import save_uploads, uploads_prune

pytestmark = pytest.mark.django_db

DAYS = 7


@pytest.fixture(autouse=True)
def uploads_dir(settings, tmp_path):
    settings.PORTAL_UPLOADS_DIR = tmp_path / "uploads"
    settings.PORTAL_UPLOAD_RETENTION_DAYS = DAYS
    return settings.PORTAL_UPLOADS_DIR


def _job(*, ended_days_ago: float | None, status="failed", retryable=False, paths=None) -> Job:
    if paths is None:
        paths, _ = save_uploads([SimpleUploadedFile("MC.json", b"[]")])
    job = job_create(kind="import_items", params={"paths": [str(p) for p in paths]})
    fields = {"status": status, "retryable": retryable, "task_name": import_items_task.name}
    if ended_days_ago is not None:
        fields["finished_at"] = timezone.now() - timedelta(days=ended_days_ago)
    Job.objects.filter(pk=job.pk).update(**fields)
    job.refresh_from_db()
    return job


def _age(folder, days: float) -> None:
    stamp = (timezone.now() - timedelta(days=days)).timestamp()
    os.utime(folder, (stamp, stamp))


def test_files_of_jobs_ended_before_the_window_go_and_the_rest_stay(uploads_dir, tmp_path):
    refused_long_ago = _job(ended_days_ago=DAYS + 1)
    succeeded_long_ago = _job(ended_days_ago=DAYS + 1, status="succeeded")
    refused_yesterday = _job(ended_days_ago=1)
    still_running = _job(ended_days_ago=None, status="running")
    _age(still_running.upload_folders()[0], DAYS + 30)
    own_file = tmp_path / "mine" / "TF.json"  # a command-line import reads the person's own file: never touched
    own_file.parent.mkdir()
    own_file.write_text("[]")
    command_line = _job(ended_days_ago=DAYS + 1, paths=[own_file])
    old_orphan, new_orphan = uploads_dir / "0ld", uploads_dir / "n3w"  # e.g. a synchronous gold import's
    old_orphan.mkdir()
    new_orphan.mkdir()
    _age(old_orphan, DAYS + 1)

    report = uploads_prune(older_than_days=DAYS)

    assert sorted(report.jobs) == sorted([str(refused_long_ago.pk), str(succeeded_long_ago.pk)])
    assert report.orphans == ["0ld"]
    for job in (refused_long_ago, succeeded_long_ago):
        assert not job.upload_folders()[0].exists()
        job.refresh_from_db()
        assert job.uploads_deleted_at is not None
    for job in (refused_yesterday, still_running):
        assert job.upload_folders()[0].exists()
    assert own_file.exists() and new_orphan.exists()
    command_line.refresh_from_db()
    assert command_line.uploads_deleted_at is None
    assert uploads_prune(older_than_days=DAYS).as_dict() == {"jobs": [], "orphans": []}


def test_command_and_beat_schedule(uploads_dir, settings):
    from portal.tasks import uploads_prune_task

    job = _job(ended_days_ago=3)
    call_command("uploads_prune", "--days", "2")
    job.refresh_from_db()
    assert job.uploads_deleted_at is not None and not job.upload_folders()[0].exists()
    assert settings.CELERY_BEAT_SCHEDULE["prune-uploads"]["task"] == uploads_prune_task.name


def test_a_refused_upload_is_kept_then_deleted_and_the_job_page_says_so(
    organizer_client, django_capture_on_commit_callbacks
):
    bad = SimpleUploadedFile("MC.json", json.dumps([{"type": "multiple_choice", "question": "q"}]).encode())
    with django_capture_on_commit_callbacks(execute=True):
        organizer_client.post(reverse("import"), {"kind": "items", "format": "cliniqlink", "files": [bad]})
    job = Job.objects.get()
    assert job.status == "failed" and QAItem.objects.count() == 0
    folder = job.upload_folders()[0]
    assert (folder / "MC.json").exists()
    page = organizer_client.get(reverse("job", args=[job.pk])).content.decode()
    until = job.uploads_delete_after
    shown = re.sub(r"<[^>]+>", "", page)  # the moment is a <time> the browser writes in the viewer's zone
    assert f"kept until {until.day} {until:%b %Y, %H:%M} UTC" in shown

    uploads_prune(older_than_days=DAYS, now=job.finished_at + timedelta(days=DAYS - 1))
    assert folder.exists()
    uploads_prune(older_than_days=DAYS, now=job.finished_at + timedelta(days=DAYS, minutes=1))
    assert not folder.exists()
    page = organizer_client.get(reverse("job", args=[job.pk])).content.decode()
    assert "The uploaded files were deleted on" in page
    assert organizer_client.get(f"/api/jobs/{job.pk}/").json()["uploads_deleted_at"]


def test_a_retryable_job_runs_again_while_its_files_are_kept_and_is_refused_once_they_are_gone(
    organizer, organizer_client
):
    kept = _job(ended_days_ago=1, retryable=True)
    assert job_retry(job=kept, by=organizer).status == "queued"

    gone = _job(ended_days_ago=DAYS + 1, retryable=True)
    page = organizer_client.get(reverse("job", args=[gone.pk])).content.decode()
    assert "Run this job again" in page
    uploads_prune(older_than_days=DAYS)
    with pytest.raises(DomainError, match="files uploaded for this job were deleted on"):
        job_retry(job=gone, by=organizer)
    gone.refresh_from_db()
    assert gone.status == "failed"
    page = organizer_client.get(reverse("job", args=[gone.pk])).content.decode()
    assert "Run this job again" not in page
