"""A reviewer works through the queue in real Chromium with the keyboard only, then files a dispute."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Assignment, Dispute, QAItem, Review, VettingConfig
from annotation.services.imports import items_import, sources_import

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def queue(db):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    sources_import(paths=[ROOT / "fixtures" / "demo-sources.csv"])
    config = VettingConfig.load()
    config.second_share, config.gold_rate = 0.0, 0.0
    config.save()


def _submit_with(page, key: str):
    with page.expect_navigation():
        page.keyboard.press(key)


def test_reviewer_reviews_three_items_and_files_a_dispute_with_the_keyboard_only(page, login, make_user, queue):
    reviewer = make_user("reviewer")
    login(reviewer)
    page.goto("/review/")
    page.check("#guidelines-read")  # the guidelines, confirmed once before the first item
    _submit_with(page, "n")
    plan = [("c", "5", "Matches the excerpt."), ("i", "3", "Dose is wrong."), ("u", "1", "")]
    for verdict_key, relevance_key, comment in plan:
        assert "/review/" in page.url and page.locator("#shortcuts").is_visible()
        page.keyboard.press(verdict_key)
        if verdict_key == "u":
            page.keyboard.press("Space")  # "cannot tell" moves to its reasons: the first one, the excerpt
        page.keyboard.press(relevance_key)
        if comment:
            page.keyboard.press("e")
            page.keyboard.type(comment)
            page.keyboard.press("Escape")
        _submit_with(page, "Control+Enter" if comment else "Enter")

    disputed_assignment = Assignment.objects.get(reviewer=reviewer, status="active")
    page.keyboard.press("d")
    assert page.evaluate("document.activeElement.id") == "id_category"
    page.keyboard.press("ArrowDown")  # factual_error -> not_in_source
    page.keyboard.press("Tab")
    page.keyboard.type("The excerpt says nothing about this.")
    _submit_with(page, "Control+Enter")

    reviews = list(Review.objects.filter(reviewer=reviewer).order_by("created_at"))
    assert [(r.verdict, r.relevance, r.comment) for r in reviews] == [
        ("correct", 5, "Matches the excerpt."),
        ("incorrect", 3, "Dose is wrong."),
        ("cannot_tell", 1, ""),
    ]
    assert all(r.server_seconds >= 0 and r.active_seconds is not None for r in reviews)
    statuses = [QAItem.objects.get(pk=r.item_id).status for r in reviews]
    assert statuses == ["verified", "rejected", "in_adjudication"]
    dispute = Dispute.objects.get()
    assert dispute.raised_by == reviewer and dispute.category == "not_in_source"
    assert dispute.item_id == disputed_assignment.item_id and dispute.text == "The excerpt says nothing about this."
    assert QAItem.objects.get(pk=dispute.item_id).status == "held"
    # the next item is already open for the reviewer
    assert Assignment.objects.filter(reviewer=reviewer, status="active").exclude(pk=disputed_assignment.pk).exists()


def test_review_draft_survives_a_reload(page, login, make_user, queue):
    reviewer = make_user("reviewer")
    login(reviewer)
    page.goto("/review/")
    page.check("#guidelines-read")  # the guidelines, confirmed once before the first item
    _submit_with(page, "n")
    page.keyboard.press("i")
    page.keyboard.press("2")
    page.keyboard.press("e")
    page.keyboard.type("half-written thought")
    page.reload()
    assert page.locator("#verdict-incorrect").is_checked()
    assert page.locator("#relevance-2").is_checked()
    assert page.locator("#id_comment").input_value() == "half-written thought"
