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
    for label in ("Import items", "Report (metric correlation)", "Score a system"):
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
    assert "<td>Import model outputs</td>" in page and "<td>Import items</td>" not in page


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


def test_job_page_titles_the_job_in_words_and_links_to_the_imported_items(organizer, client, tmp_path):
    from pathlib import Path

    from annotation.tasks import import_items_task

    sample = Path(__file__).resolve().parents[2] / "fixtures" / "cliniqlink-sample"
    job = job_create(kind="import_items", params={"paths": [str(sample)], "format": "cliniqlink"}, user=organizer)
    import_items_task(str(job.pk))
    job.refresh_from_db()
    client.force_login(organizer)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "<h1>Import items</h1>" in page and "Import_Items" not in page
    assert f'href="/items/?batch={job.result["batch_id"]}"' in page
    listed = client.get(f"/items/?batch={job.result['batch_id']}").content.decode()
    assert "35 found" in listed


def test_import_errors_count_records_from_one(organizer, client, tmp_path):
    from annotation.tasks import import_items_task

    bad = tmp_path / "TF.json"
    bad.write_text('[{"question": "Is it?", "answer": "Maybe", "type": "tf", "source": {}}]')
    job = job_create(kind="import_items", params={"paths": [str(bad)], "format": "cliniqlink"}, user=organizer)
    import_items_task(str(job.pk))
    job.refresh_from_db()
    assert job.status == "failed" and "record 1" in job.error and "record 0" not in job.error
    client.force_login(organizer)
    assert "record 1" in client.get(f"/jobs/{job.pk}/").content.decode()


def test_report_and_scoring_jobs_link_to_what_they_produced(organizer, client):
    report_job = _job("report:agreement", organizer, status="succeeded")
    Job.objects.filter(pk=report_job.pk).update(params={"report_id": 7})
    scoring_job = _job("scoring", organizer, status="succeeded")
    failed = _job("report:agreement", organizer, status="failed")
    client.force_login(organizer)
    assert 'href="/analytics/reports/7/"' in client.get(f"/jobs/{report_job.pk}/").content.decode()
    assert 'href="/analytics/"' in client.get(f"/jobs/{scoring_job.pk}/").content.decode()
    assert 'id="job-outputs"' not in client.get(f"/jobs/{failed.pk}/").content.decode()
