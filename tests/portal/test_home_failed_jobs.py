"""Failed jobs under the organizer's "What to do next": each is listed until an organizer opens it (from there or the
jobs page) or dismisses it (a POST with the CSRF token, organizers only), and a failed import also until a later import
of the same kind succeeds with the same files."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from portal.jobs import job_create
from portal.models import Job

pytestmark = pytest.mark.django_db


def _job(kind: str, status: str, files: list[str], *, minutes_ago: int) -> Job:
    job = job_create(
        kind=kind, params={"paths": [f"/uploads/{n}-{name}" for n, name in enumerate(files)],
                           "displays": {f"/uploads/{n}-{name}": name for n, name in enumerate(files)}},
    )  # fmt: skip
    Job.objects.filter(pk=job.pk).update(status=status, created_at=timezone.now() - timedelta(minutes=minutes_ago))
    return Job.objects.get(pk=job.pk)


def _failed_step(client) -> str:
    html = client.get("/").content.decode()
    match = re.search(r'<li data-step="failed_jobs">(.*?)</li>', html, flags=re.S)
    return re.sub(r"\s+", " ", match.group(1)) if match else ""


def _listed(client) -> set[str]:
    return set(re.findall(r'data-job="([0-9a-f-]+)"', _failed_step(client)))


def test_a_failed_import_is_listed_with_its_file_until_it_is_dismissed(organizer):
    client = Client(enforce_csrf_checks=True)
    client.force_login(organizer)
    bad = _job("import_items", "failed", ["TF.json"], minutes_ago=30)
    step = _failed_step(client)
    assert step.startswith("1 import failed in the last 7 days.") and "TF.json" in step
    assert _listed(client) == {str(bad.pk)}

    # Without the CSRF token nothing happens.
    assert client.post("/", {"job": bad.pk, "action": "dismiss"}).status_code == 403
    assert _listed(client) == {str(bad.pk)}

    page = client.get("/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = client.post("/", {"job": bad.pk, "action": "dismiss", "csrfmiddlewaretoken": token})
    assert response.status_code == 302 and response.url.startswith(reverse("home"))
    assert _failed_step(client) == "" and Job.objects.get(pk=bad.pk).dismissed_at is not None
    # The jobs page still has it.
    assert str(bad.pk) in client.get(f"{reverse('job_list')}?status=failed").content.decode()


def test_opening_a_failed_job_from_the_home_page_takes_note_of_it(organizer, client):
    client.force_login(organizer)
    first, second = (_job("import_sources", "failed", [f"s{n}.csv"], minutes_ago=20 - n) for n in range(2))
    assert _listed(client) == {str(first.pk), str(second.pk)}
    response = client.post("/", {"job": first.pk, "action": "open"})
    assert response.status_code == 302 and response.url == reverse("job", args=[first.pk])
    assert _listed(client) == {str(second.pk)}
    assert _failed_step(client).startswith("1 import failed")


def test_only_organizers_dismiss_and_only_failed_jobs(organizer, make_user, client):
    bad = _job("import_items", "failed", ["MC.json"], minutes_ago=5)
    done = _job("import_items", "succeeded", ["list.json"], minutes_ago=5)
    client.force_login(make_user("reviewer", "adjudicator"))
    assert client.post("/", {"job": bad.pk, "action": "dismiss"}).status_code == 403
    assert Job.objects.get(pk=bad.pk).dismissed_at is None
    client.force_login(organizer)
    assert client.post("/", {"job": done.pk, "action": "dismiss"}).status_code == 404
    assert client.post("/", {"job": "not-a-job", "action": "dismiss"}).status_code == 404
    assert Job.objects.get(pk=done.pk).dismissed_at is None


def test_a_later_successful_import_of_the_same_file_clears_the_failure(organizer, client):
    client.force_login(organizer)
    bad = _job("import_items", "failed", ["TF.json", "MC.json"], minutes_ago=60)
    other = _job("import_items", "failed", ["short.json"], minutes_ago=50)
    _job("import_items", "succeeded", ["TF.json", "MC.json"], minutes_ago=90)  # before the failure: no
    _job("import_sources", "succeeded", ["TF.json", "MC.json"], minutes_ago=10)  # another kind of import: no
    _job("import_items", "succeeded", ["TF.json"], minutes_ago=10)  # not every file it failed on: no
    assert _listed(client) == {str(bad.pk), str(other.pk)}
    _job("import_items", "succeeded", ["MC.json", "TF.json", "list.json"], minutes_ago=5)
    assert _listed(client) == {str(other.pk)}
    assert _failed_step(client).startswith("1 import failed in the last 7 days.")


def test_reading_a_failed_job_on_its_own_page_takes_note_of_it_for_organizers_only(organizer, make_user, client):
    job = _job("import_items", "failed", ["TF.json"], minutes_ago=5)
    job.created_by = make_user("reviewer")
    job.save(update_fields=["created_by"])
    client.force_login(job.created_by)  # the person who started it is not the one the reminder is for
    assert client.get(reverse("job", args=[job.pk])).status_code == 200
    assert Job.objects.get(pk=job.pk).dismissed_at is None
    client.force_login(organizer)
    assert _listed(client) == {str(job.pk)}
    assert client.get(reverse("job", args=[job.pk])).status_code == 200
    assert _listed(client) == set() and Job.objects.get(pk=job.pk).dismissed_at is not None
