"""The jobs page: organizers see every background job, anyone else their own; filters, paging, home counts."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from portal.jobs import job_create
from portal.models import Job

pytestmark = pytest.mark.django_db


def _job(kind: str, user, **fields) -> Job:
    job = job_create(kind=kind, params={}, user=user)
    if fields:
        Job.objects.filter(pk=job.pk).update(**fields)
    return job


def test_organizers_see_every_job_with_its_state(organizer, make_user, client):
    other = make_user("organizer", email="second@example.org")
    started = timezone.now() - timedelta(minutes=5)
    _job(
        "import_items",
        organizer,
        status="succeeded",
        progress_done=35,
        progress_total=35,
        attempts=1,
        started_at=started,
        finished_at=started + timedelta(seconds=42),
        message="importing: writing rows",
    )
    _job("report:metric_correlation", other, status="failed", error="Internal error: RuntimeError: disk full")
    _job("scoring", None, status="running", attempts=2, heartbeat_at=timezone.now() - timedelta(minutes=12))
    client.force_login(organizer)
    page = client.get("/jobs/").content.decode()
    assert "3 found" in page
    for label in ("Item import", "Report (metric correlation)", "Scoring run"):
        assert f"<td>{label}</td>" in page
    assert "Internal error: RuntimeError: disk full" in page
    assert "no progress for 12 min" in page
    assert "finished in 42 s" in page and "importing: writing rows" not in page
    assert page.count('data-status="') == 3


def test_filters_by_status_and_kind(organizer, client):
    _job("import_items", organizer, status="failed")
    _job("report:agreement", organizer, status="failed")
    _job("report:agreement", organizer, status="succeeded")
    client.force_login(organizer)
    assert "2 found" in client.get("/jobs/?status=failed").content.decode()
    assert "1 found" in client.get("/jobs/?status=failed&kind=report").content.decode()
    assert "3 found" in client.get("/jobs/?status=nonsense").content.decode()  # an unknown status filters nothing


def test_others_see_only_their_own_jobs(organizer, make_user, client):
    ranker = make_user("ranker", email="ranker@example.org")
    _job("import_items", organizer)
    own = _job("import_outputs", ranker)
    client.force_login(ranker)
    page = client.get("/jobs/").content.decode()
    assert "1 found" in page and str(own.pk) in page
    assert "<td>Model outputs import</td>" in page and "<td>Item import</td>" not in page


def test_pages_of_fifty(organizer, client):
    for _ in range(51):
        _job("scoring", organizer)
    client.force_login(organizer)
    first = client.get("/jobs/").content.decode()
    assert first.count('data-status="') == 50 and "Page 1 of 2" in first
    assert client.get("/jobs/?page=2").content.decode().count('data-status="') == 1


def test_the_organizer_home_counts_jobs_of_the_last_week(organizer, reviewer, client):
    _job("scoring", organizer, status="failed")
    _job("scoring", organizer, status="failed")
    old = _job("scoring", organizer, status="failed")
    Job.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=8))
    client.force_login(organizer)
    home = client.get("/").content.decode()
    assert 'href="/jobs/?status=failed" class="job-failed">Failed</a></td><td>2</td>' in home
    client.force_login(reviewer)
    assert "Jobs in the last 7 days" not in client.get("/").content.decode()
