"""In real Chromium: ``z`` reopens the last review and a change is saved; a draft typed in one browser appears in
another browser signed in as the same person."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Assignment, QAItem, Review, ReviewDraft, ReviewRevision, VettingConfig
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


def _warm_up(page):
    """The live server's first page can take long on a busy machine (templates compiled on first use)."""
    page.goto("/accounts/login/", timeout=60_000)


def _press_and_wait(page, key: str):
    with page.expect_navigation():
        page.keyboard.press(key)


def test_z_reopens_the_last_review_and_the_change_is_saved(page, login, make_user, queue):
    reviewer = make_user("reviewer")
    _warm_up(page)
    login(reviewer)
    page.goto("/review/")
    page.check("#guidelines-read")  # the guidelines, confirmed once before the first item
    _press_and_wait(page, "n")
    page.keyboard.press("c")
    page.keyboard.press("5")
    _press_and_wait(page, "Enter")  # the wrong key: meant "incorrect"
    first = Review.objects.get(reviewer=reviewer)
    assert "left for you" in page.locator("#queue-outlook").inner_text()

    _press_and_wait(page, "z")
    assert page.url.endswith(f"/review/mine/{first.assignment_id}/")
    assert page.locator("#verdict-correct").is_checked()
    page.keyboard.press("i")
    page.keyboard.press("2")
    _press_and_wait(page, "Enter")
    assert "was changed" in page.content()
    assert page.locator("#my-reviews").is_visible()

    first.refresh_from_db()
    assert (first.verdict, first.relevance) == ("incorrect", 2)
    assert QAItem.objects.get(pk=first.item_id).status == "rejected"
    assert list(ReviewRevision.objects.values_list("verdict", "relevance")) == [("correct", 5)]
    # Back to the open item from the list.
    with page.expect_navigation():
        page.click("#back-to-item")
    assert Assignment.objects.get(reviewer=reviewer, status="active").pk == int(page.url.rstrip("/").split("/")[-1])


def test_a_draft_typed_in_one_browser_appears_in_another(chromium_browser, page, login, live_server, make_user, queue):
    reviewer = make_user("reviewer")
    _warm_up(page)
    login(reviewer)
    page.goto("/review/")
    page.check("#guidelines-read")  # the guidelines, confirmed once before the first item
    _press_and_wait(page, "n")
    review_url = page.url
    page.keyboard.press("i")
    page.keyboard.press("3")
    page.keyboard.press("e")
    page.keyboard.type("Dose is per kilogram, not total.")
    page.keyboard.press("Escape")
    for _ in range(50):  # the save is debounced by a second
        draft = ReviewDraft.objects.filter(reviewer=reviewer).first()
        if draft and draft.data.get("comment") == "Dose is per kilogram, not total.":
            break
        page.wait_for_timeout(200)
    else:
        pytest.fail("the draft never reached the server")

    other = chromium_browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    try:
        second = other.new_page()
        second.goto("/accounts/login/")
        second.fill("input[name=login]", reviewer.email)
        second.fill("input[name=password]", "pw-for-tests-123")
        second.click("button[type=submit]")
        second.wait_for_url(lambda url: "/accounts/login" not in url)
        second.goto(review_url)
        assert second.locator("#verdict-incorrect").is_checked()
        assert second.locator("#relevance-3").is_checked()
        assert second.locator("#id_comment").input_value() == "Dose is per kilogram, not total."
        # Sent from the second device: the draft is gone from the server.
        with second.expect_navigation():
            second.click("#submit-review")
        assert not ReviewDraft.objects.exists()
        assert Review.objects.get(reviewer=reviewer).comment == "Dose is per kilogram, not total."
    finally:
        other.close()
