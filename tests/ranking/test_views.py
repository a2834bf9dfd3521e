"""Pages and endpoints of the ranking app: roles (anonymous → login, wrong role → 403), forms, the API schema."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ranking.models import RankingTask, Study

from .conftest import SYSTEM_NAMES

pytestmark = pytest.mark.django_db

ORGANIZER_PAGES = ["study_list", "study_create"]


@pytest.mark.parametrize("role", ["", "reviewer", "ranker"])
@pytest.mark.parametrize("name", ORGANIZER_PAGES)
def test_organizer_pages_refuse_other_roles(client, make_user, role, name):
    if role:
        client.force_login(make_user(role))
        assert client.get(reverse(name)).status_code == 403
    else:
        assert client.get(reverse(name)).status_code == 302


@pytest.mark.parametrize(("role", "expected"), [("ranker", 200), ("reviewer", 403), ("organizer", 403)])
def test_ranking_home_is_for_rankers(client, make_user, role, expected):
    client.force_login(make_user(role))
    assert client.get(reverse("ranking_home")).status_code == expected


@pytest.mark.parametrize(("role", "expected"), [("ranker", 200), ("reviewer", 403), ("organizer", 403)])
def test_ranker_api_is_for_rankers(client, make_user, role, expected):
    client.force_login(make_user(role))
    assert client.get("/api/ranking/studies/").status_code == expected


def test_organizer_creates_a_study_from_the_form(organizer_client, systems_with_outputs):
    response = organizer_client.get(reverse("study_create"))
    assert SYSTEM_NAMES[0] in response.content.decode()
    data = {
        "name": "Form study",
        "systems": [s.pk for s in Study.systems.field.related_model.objects.filter(name__in=SYSTEM_NAMES)],
        "qa_types": ["short_answer"],
        "sample_size": "3",
        "seed": "2",
        "include_reference": "on",
        "ask_ranking": "on",
        "overlap": "2",
        "tag_scale": "good, okay, bad",
        "unblinding_rate": "0.2",
        "guidelines": "Be kind.",
    }
    response = organizer_client.post(reverse("study_create"), data)
    study = Study.objects.get(name="Form study")
    assert response.status_code == 302 and response["Location"] == reverse("study_detail", args=[study.pk])
    assert study.overlap == 2 and study.questions.count() == 3 and study.unblinding_rate == 0.2
    page = organizer_client.get(response["Location"]).content.decode()
    assert "30 item(s) left out" not in page and "Rankings submitted" in page
    assert "QA types Short answer; a sample of 3" in page and "short_answer" not in page  # the set-up in words
    assert organizer_client.post(reverse("study_create"), {**data, "systems": []}).status_code == 400


def test_study_api_create_state_and_progress(organizer_client, systems_with_outputs):
    response = organizer_client.post(
        "/api/studies/",
        {"name": "API study", "systems": SYSTEM_NAMES, "sample_size": 4},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["included"] == 4 and body["excluded"] == 0 and body["study"]["systems"] == sorted(SYSTEM_NAMES)
    study_id = body["study"]["id"]
    closed = organizer_client.patch(f"/api/studies/{study_id}/", {"state": "closed"}, content_type="application/json")
    assert closed.json()["state"] == "closed"
    assert organizer_client.get(f"/api/studies/{study_id}/").json()["progress"]["questions"] == 4
    bad = organizer_client.post("/api/studies/", {"name": "x", "systems": ["nope"]}, content_type="application/json")
    assert bad.status_code == 400 and "unknown system" in bad.json()["detail"]


def test_ranking_page_round_trip_by_form_post(client, make_study, make_user):
    study = make_study(sample_size=2, guidelines="GUIDELINE-TEXT")
    ranker = make_user("ranker")
    client.force_login(ranker)
    start = client.get(reverse("ranking_next", args=[study.pk]))
    assert start.status_code == 200 and "GUIDELINE-TEXT" in start.content.decode()
    assert not RankingTask.objects.filter(ranker=ranker).exists()  # opening the start page leases nothing
    task_url = client.post(reverse("ranking_next", args=[study.pk]))["Location"]
    page = client.get(task_url).content.decode()
    assert "GUIDELINE-TEXT" in page
    task = RankingTask.objects.get(ranker=ranker)
    incomplete = client.post(task_url, {"rank_A": "1", "tag_A": "good", "idempotency_key": "k"})
    assert incomplete.status_code == 400
    assert "no rank for answer B, C" in incomplete.content.decode()
    form = {"idempotency_key": "k", "time_spent_ms": "1234", "comment": "ok"}
    for i, slot in enumerate("ABC"):
        form |= {f"rank_{slot}": str(i + 1), f"tag_{slot}": "okay"}
    done = client.post(task_url, form)
    # Saved, and the next question is leased in the same request (no GET takes a lease).
    second = RankingTask.objects.exclude(pk=task.pk).get(ranker=ranker)
    assert done.status_code == 302 and done["Location"] == reverse("ranking_task", args=[second.pk])
    task.refresh_from_db()
    assert task.status == "submitted" and task.time_spent_ms == 1234
    assert client.post(task_url, form).status_code == 302  # same key again: no error, nothing changes
    assert RankingTask.objects.filter(ranker=ranker).count() == 2
    # The finished question's page sends the ranker to the start page, which leases nothing.
    assert client.get(task_url)["Location"] == reverse("ranking_next", args=[study.pk])
    # Last question: submitting it shows the done page.
    form["idempotency_key"] = "k2"
    last = client.post(reverse("ranking_task", args=[second.pk]), form)
    assert last.status_code == 302 and last["Location"] == reverse("ranking_next", args=[study.pk]) + "?done=1"
    assert "no question left" in client.get(last["Location"]).content.decode()


def test_schema_generates_without_errors(organizer_client):
    response = organizer_client.get("/api/schema/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "/api/ranking/tasks/{task_id}/submit/" in text and "/api/studies/" in text


def test_organizer_uploads_outputs_and_the_job_imports_them(
    organizer_client, sample_items, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from portal.models import Job
    from ranking.models import SystemOutput

    lines = "".join(f'{{"item_uid": "{i.uid}", "response": "r"}}\n' for i in sample_items[:4])
    upload = SimpleUploadedFile("outputs.jsonl", lines.encode())
    with django_capture_on_commit_callbacks(execute=True):
        response = organizer_client.post(reverse("outputs_import"), {"system": "SYSNAME-UP", "files": [upload]})
    assert response.status_code == 302
    job = Job.objects.get(kind="import_outputs")
    assert job.status == "succeeded", job.error
    assert job.result["created"] == 4 and SystemOutput.objects.filter(system__name="SYSNAME-UP").count() == 4
    assert "SYSNAME-UP" in organizer_client.get(reverse("study_list")).content.decode()
