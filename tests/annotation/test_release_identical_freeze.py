"""A freeze identical to the latest version of its name (same rule, same items, same content) is refused at
every door, naming the existing release; anything that changes the content makes a new version."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import QAItem, Release
from annotation.services.imports import items_import
from annotation.services.releases import release_freeze
from portal.errors import Conflict

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


@pytest.fixture
def first():
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary")
    return release_freeze(name="bench")


def test_service_refuses_an_identical_freeze_naming_the_release(first):
    with pytest.raises(Conflict, match="Nothing changed since bench@1") as caught:
        release_freeze(name="bench", note="again")
    assert caught.value.code == "identical_release"
    assert list(Release.objects.values_list("name", "version")) == [("bench", 1)]


def test_a_changed_item_a_changed_rule_or_another_name_freezes(first):
    QAItem.objects.filter(pk=QAItem.objects.order_by("id").first().pk).update(final_relevance=4.0)
    assert release_freeze(name="bench", rule={"min_relevance": 4}).version == 2  # same items, other content
    assert release_freeze(name="bench", rule={"min_relevance": 4.5}).version == 3  # one item fewer
    assert release_freeze(name="other").version == 1


def test_api_answers_409_naming_the_release(first, organizer_client):
    response = organizer_client.post("/api/releases/", {"name": "bench"}, content_type="application/json")
    assert response.status_code == 409
    assert response.json()["code"] == "identical_release" and "bench@1" in response.json()["detail"]
    assert Release.objects.count() == 1


def test_command_refuses_naming_the_release(first):
    with pytest.raises(CommandError, match="Nothing changed since bench@1"):
        call_command("freeze_release", "bench")
    assert Release.objects.count() == 1


def test_page_shows_the_refusal(first, organizer_client):
    # "All benchmarks" chosen on purpose: the rule of the service's default freeze (the form's default is one).
    response = organizer_client.post(
        "/releases/",
        {
            "name": "bench",
            "benchmark": "",
            "min_relevance": "5",
            "final_verdict": "correct",
            "exclude_open_issues": "on",
        },
    )
    assert response.status_code == 400
    assert "Nothing changed since bench@1" in response.content.decode()
    assert Release.objects.count() == 1
