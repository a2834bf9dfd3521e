"""The home page offers each role its next step with the person's own numbers (and nothing of anyone else's)."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command

from annotation.models import QAItem
from annotation.selectors.review import reviewer_progress
from annotation.services.queue import assignment_next
from portal.models import User
from tests.reviews import done_review

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(db):
    call_command("load_demo", verbosity=0)  # inside the test's transaction: rolled back afterwards


def _card(html: str, card_id: str) -> str:
    match = re.search(rf'<section class="card" id="{card_id}">(.*?)</section>', html, flags=re.S)
    assert match, f"no {card_id} card"
    return re.sub(r"\s+", " ", match.group(1))


def test_a_reviewer_sees_their_own_count_and_the_way_back_to_an_item_in_progress(demo, client):
    reviewer = User.objects.get(email="reviewer1@demo.portal")
    client.force_login(reviewer)
    before = reviewer_progress(reviewer)["total"]
    card = _card(client.get("/").content.decode(), "my-review-work")
    assert f"{before} item{'s' if before != 1 else ''} reviewed" in card
    assert 'href="/review/"' in card and "Continue" not in card

    lease = assignment_next(reviewer=reviewer)
    card = _card(client.get("/").content.decode(), "my-review-work")
    assert f'href="/review/{lease.pk}/"' in card and "Continue" in card

    # An item nobody was given yet (the demo has reviewed some, and gold items stay "imported").
    other = QAItem.objects.filter(status="imported", assignments__isnull=True).exclude(pk=lease.item_id).first()
    done_review(other, reviewer, "primary", "correct", 5)  # one more review of theirs
    done_review(other, User.objects.get(email="reviewer2@demo.portal"), "secondary", "correct", 5)  # not theirs
    card = _card(client.get("/").content.decode(), "my-review-work")
    after = before + 1
    assert f"{after} item{'s' if after != 1 else ''} reviewed, " in card


def test_an_adjudicator_sees_how_many_items_wait(demo, client):
    from annotation.selectors.adjudication import adjudication_queue

    client.force_login(User.objects.get(email="adjudicator@demo.portal"))
    html = client.get("/").content.decode()
    waiting = adjudication_queue(user=User.objects.get(email="adjudicator@demo.portal")).count()
    assert f"{waiting} item{'s' if waiting != 1 else ''} waiting for a decision" in _card(html, "my-adjudication-work")
    assert 'id="my-ranking-work"' not in html


def test_a_ranker_sees_their_progress_per_open_study(demo, client):
    from ranking.selectors.studies import studies_for_ranker

    ranker = User.objects.get(email="ranker1@demo.portal")
    client.force_login(ranker)
    card = _card(client.get("/").content.decode(), "my-ranking-work")
    rows = studies_for_ranker(ranker=ranker)
    assert rows
    for row in rows:
        assert f"<td>{row['study'].name}</td><td>{row['done']} of {row['questions']} questions</td>" in card


def test_organizers_get_no_work_cards_of_other_roles(demo, client):
    client.force_login(User.objects.get(email="organizer@demo.portal"))
    html = client.get("/").content.decode()
    assert "Items by status" in html
    assert not re.search(r'id="my-(review|adjudication|ranking)-work"', html)


def _steps(client) -> list[tuple[str, str]]:
    card = _card(client.get("/").content.decode(), "next-steps")
    return re.findall(r'<li data-step="(\w+)">(.*?)</li>', card)


def test_organizer_home_says_what_to_do_next_in_priority_order(organizer, make_user, client):
    from pathlib import Path

    from annotation.services.imports import items_import
    from annotation.services.releases import release_freeze
    from portal.jobs import job_create
    from portal.models import Job

    client.force_login(organizer)
    assert [key for key, _ in _steps(client)] == ["no_items"]

    items_import(paths=[Path(__file__).resolve().parents[2] / "fixtures" / "cliniqlink-sample"])
    items = list(QAItem.objects.order_by("id"))
    QAItem.objects.filter(pk__in=[i.pk for i in items[:12]]).update(status="in_adjudication")
    QAItem.objects.filter(pk__in=[i.pk for i in items[12:20]]).update(
        status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary"
    )
    for _ in range(2):
        Job.objects.filter(pk=job_create(kind="import_items", params={}).pk).update(status="failed")
    steps = dict(_steps(client))
    assert list(steps) == [
        "failed_jobs", "adjudication_blocked", "adjudication_waiting", "missing_excerpts", "release", "no_reviewers",
    ]  # fmt: skip
    assert steps["failed_jobs"].startswith("2 imports failed in the last 7 days.")
    assert 'href="/jobs/?status=failed"' in steps["failed_jobs"]
    assert steps["adjudication_waiting"].startswith("12 items wait for adjudication.")
    assert "No release yet: 8 ClinIQLink items passed vetting. Freeze one." in steps["release"]
    assert 'href="/releases/"' in steps["release"]
    assert "35 items have no source excerpt" in steps["missing_excerpts"]

    make_user("adjudicator", email="adj@example.org")
    make_user("reviewer", email="rev@example.org")
    release_freeze(name="bench", rule={"benchmark": "cliniqlink"})
    keys = [key for key, _ in _steps(client)]
    assert "release" not in keys and "adjudication_blocked" not in keys and "no_reviewers" not in keys


def test_next_steps_are_for_organizers_only(reviewer, client):
    client.force_login(reviewer)
    assert 'id="next-steps"' not in client.get("/").content.decode()
