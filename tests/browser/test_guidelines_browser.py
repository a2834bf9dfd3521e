"""Reviewer guidelines in real Chromium: read and confirmed before the first item (keyboard only), shown beside the
item, ``g`` toggles them, the review records the version; on a phone the excerpt comes before the verdict form and
the lease end is shown in the viewer's time zone."""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from annotation.models import Assignment, Review, VettingConfig
from annotation.selectors.guidelines import guideline_current
from annotation.services.imports import items_import, sources_import

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def queue(db):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample" / "TF.json"])
    sources_import(paths=[ROOT / "fixtures" / "demo-sources.csv"])
    config = VettingConfig.load()
    config.second_share, config.gold_rate = 0.0, 0.0
    config.save()


def _panel_open(page) -> bool:
    return page.evaluate("document.getElementById('guideline-panel').open")


def test_guideline_beside_the_item_g_toggles_it_and_the_review_records_its_version(page, login, make_user, queue):
    reviewer = make_user("reviewer")
    login(reviewer)
    page.goto("/review/")
    assert page.locator("#guideline-start").get_by_text("Before your first item").is_visible()
    assert page.locator("#guideline-cliniqlink-true_false").is_visible()
    # "n" without the tick: the browser points at the tick instead of taking an item
    page.keyboard.press("n")
    assert page.evaluate("document.activeElement.id") == "guidelines-read"
    assert not Assignment.objects.filter(reviewer=reviewer).exists()
    page.keyboard.press("Space")
    with page.expect_navigation():
        page.keyboard.press("n")
    assert page.url.rstrip("/").split("/")[-1].isdigit()

    panel, item = page.locator("#guideline-panel"), page.locator("#item-card")
    assert panel.is_visible() and _panel_open(page)
    assert "Guidelines: True / false" in panel.locator("summary").inner_text()
    assert "answer False is a correct item" in panel.inner_text()
    item_box, panel_box = item.bounding_box(), panel.bounding_box()
    assert panel_box["x"] >= item_box["x"] + item_box["width"]  # beside the item, not below it

    page.keyboard.press("g")
    assert not _panel_open(page) and not page.locator("#guideline-text").is_visible()
    page.keyboard.press("g")
    assert _panel_open(page) and page.locator("#guideline-text").is_visible()
    page.keyboard.press("e")  # typing a "g" in the comment does not toggle the panel
    page.keyboard.type("good")
    page.keyboard.press("Escape")
    assert _panel_open(page)
    page.keyboard.press("g")
    page.reload()  # the reviewer's choice is remembered (the version is no longer new to them)
    assert not _panel_open(page)

    page.keyboard.press("c")
    page.keyboard.press("5")
    label = page.locator("label.choice", has=page.locator("#verdict-correct"))
    other = page.locator("label.choice", has=page.locator("#verdict-incorrect"))
    assert label.evaluate("e => getComputedStyle(e).backgroundColor") != other.evaluate(
        "e => getComputedStyle(e).backgroundColor"
    )  # the chosen row stands out
    with page.expect_navigation():
        page.keyboard.press("Enter")
    stored = Review.objects.get(reviewer=reviewer)
    assert stored.guideline == guideline_current(benchmark="cliniqlink", qa_type="true_false")
    assert stored.guideline.number == 1 and stored.comment == "good"


def test_on_a_phone_the_excerpt_comes_before_the_form_and_the_lease_is_in_local_time(
    chromium_browser, live_server, make_user, queue
):
    reviewer = make_user("reviewer")
    context = chromium_browser.new_context(
        base_url=live_server.url, viewport={"width": 390, "height": 844}, timezone_id="Asia/Tokyo", locale="en-GB"
    )
    context.set_default_timeout(10_000)
    page = context.new_page()
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    try:
        page.goto("/accounts/login/")
        page.fill("input[name=login]", reviewer.email)
        page.fill("input[name=password]", "pw-for-tests-123")
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/accounts/login" not in url)
        page.goto("/review/")
        page.check("#guidelines-read")
        with page.expect_navigation():
            page.click("#next-button")
        excerpt = page.locator("section.card", has=page.locator(".excerpt")).bounding_box()
        form = page.locator("#verdict-card").bounding_box()
        item = page.locator("#item-card").bounding_box()
        assert item["y"] < excerpt["y"] < form["y"]
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        lease = page.locator("h1 time")
        assignment = Assignment.objects.get(reviewer=reviewer)
        tokyo = assignment.expires_at.astimezone(ZoneInfo("Asia/Tokyo"))
        assert lease.get_attribute("data-localised") == "1"
        assert tokyo.strftime("%H:%M") in lease.inner_text() and "UTC" in lease.get_attribute("title")
    finally:
        context.close()
    assert not violations, violations
