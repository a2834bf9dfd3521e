"""Ranking drafts on the server: owner only, CSRF, checked, restored, cleared on submit."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from ranking.models import RankingDraft
from ranking.services.queue import task_next, task_release
from ranking.services.submissions import task_submit

from .conftest import SYSTEM_NAMES, full_answers

pytestmark = pytest.mark.django_db
DRAFT = {
    "order": ["C", "A", "B"],
    "ordered": True,
    "fields": {"tag_A": "good", "hall_B": True, "hallkind_B": "extrinsic", "comment": "Unsure about B."},
    "elapsed": 12_000,
}


@pytest.fixture
def leased(make_study, make_user):
    ranker = make_user("ranker")
    return task_next(study=make_study(sample_size=2), ranker=ranker), ranker


def _url(task):
    return reverse("ranking_task_draft", args=[task.pk])


def test_draft_is_saved_and_read_back_by_its_owner_only(client, leased, make_user):
    task, ranker = leased
    client.force_login(ranker)
    assert client.get(_url(task)).json() == {"draft": None}
    saved = client.post(_url(task), DRAFT, content_type="application/json")
    assert saved.status_code == 200
    body = client.get(_url(task)).json()
    assert body["draft"] == DRAFT and "saved_at" in body
    assert not any(name in str(body) for name in SYSTEM_NAMES)
    # another ranker: the same 404 as for a task that does not exist, and nothing is changed
    client.force_login(make_user("ranker"))
    assert client.get(_url(task)).status_code == 404
    assert client.post(_url(task), {"order": []}, content_type="application/json").status_code == 404
    assert RankingDraft.objects.get(task=task).data == DRAFT
    client.force_login(make_user("reviewer"))
    assert client.get(_url(task)).status_code == 403


def test_draft_save_needs_the_csrf_token(leased):
    task, ranker = leased
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(ranker)
    assert browser.post(_url(task), DRAFT, content_type="application/json").status_code == 403
    browser.get(reverse("ranking_task", args=[task.pk]))
    token = browser.cookies["csrftoken"].value
    response = browser.post(_url(task), DRAFT, content_type="application/json", headers={"X-CSRFToken": token})
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        ({"order": ["A", "Z"]}, "order: only this question's answer letters"),
        ({"order": ["A", "A"]}, "order: each answer once"),
        ({"fields": {"rank_A": "1"}}, "unknown field 'rank_A'"),
        ({"fields": {"tag_A": ["good"]}}, "tag_A must be text or yes/no"),
        ({"elapsed": -5}, "elapsed must be a number"),
        ([1, 2], "the draft must be an object"),
    ],
)
def test_bad_drafts_are_refused_with_the_reason_and_change_nothing(client, leased, payload, error):
    task, ranker = leased
    client.force_login(ranker)
    response = client.post(_url(task), payload, content_type="application/json")
    assert response.status_code == 400 and error in response.json()["error"]
    assert not RankingDraft.objects.exists()
    broken = client.post(_url(task), "{not json", content_type="application/json")
    assert broken.status_code == 400 and "not valid JSON" in broken.json()["error"]


def test_draft_is_cleared_on_submit_and_refused_once_the_task_is_not_open(client, leased):
    task, ranker = leased
    client.force_login(ranker)
    client.post(_url(task), DRAFT, content_type="application/json")
    task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task))
    assert not RankingDraft.objects.filter(task=task).exists()
    refused = client.post(_url(task), DRAFT, content_type="application/json")
    assert refused.status_code == 409 and not RankingDraft.objects.exists()
    skipped = task_next(study=task.study, ranker=ranker)
    task_release(task=skipped, ranker=ranker)
    assert client.post(_url(skipped), DRAFT, content_type="application/json").status_code == 409
