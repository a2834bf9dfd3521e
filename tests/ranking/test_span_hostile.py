"""Hostile values in the spans a page, a draft or an API client sends: refused with the answer and mark named,
nothing stored, never a 500."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from ranking.models import HallucinationSpan, RankingDraft
from ranking.services.queue import task_next

pytestmark = pytest.mark.django_db

HOSTILE = [
    ({"start": 0, "end": 2, "kind": "other", "note": "a\u0000b"}, "NUL"),
    ({"start": 0, "end": 2, "kind": "other", "note": "\ud800"}, "surrogate"),
    ({"start": 0, "end": 10**400, "kind": "other"}, ""),
    ({"start": "0", "end": 2, "kind": "other"}, "whole numbers"),
    ({"start": True, "end": 2, "kind": "other"}, "whole numbers"),
    ({"start": 0, "end": 2, "kind": ["other"]}, "kind"),
    ({"start": 0, "end": 2, "kind": "<script>alert(1)</script>"}, "kind"),
]


@pytest.fixture
def task_and_client(make_study, make_user, client):
    study = make_study(sample_size=1, ask_ranking=False, ask_spans=True)
    ranker = make_user("ranker")
    task = task_next(study=study, ranker=ranker)
    client.force_login(ranker)
    return task, client


@pytest.mark.parametrize(("mark", "words"), HOSTILE)
def test_the_page_refuses_hostile_marks(task_and_client, mark, words):
    task, client = task_and_client
    body = json.dumps({"A": [mark], "B": [], "C": []})  # json escapes NUL and the surrogate, as a browser would
    response = client.post(reverse("ranking_task", args=[task.pk]), {"spans": body, "idempotency_key": "k"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "answer A, mark 1" in page and words in page and "<script>alert" not in page
    assert not HallucinationSpan.objects.exists()


@pytest.mark.parametrize(("mark", "words"), HOSTILE)
def test_the_api_refuses_hostile_marks(task_and_client, mark, words):
    task, client = task_and_client
    body = json.dumps({"spans": {"A": [mark], "B": [], "C": []}})
    response = client.post(f"/api/ranking/tasks/{task.pk}/submit/", body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert not HallucinationSpan.objects.exists()


@pytest.mark.parametrize(("mark", "words"), HOSTILE)
def test_a_draft_refuses_hostile_marks(task_and_client, mark, words):
    task, client = task_and_client
    body = json.dumps({"order": ["A", "B", "C"], "fields": {}, "elapsed": 0, "spans": {"A": [mark]}})
    response = client.post(reverse("ranking_task_draft", args=[task.pk]), body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert not RankingDraft.objects.filter(task=task, data__has_key="spans").exists()
