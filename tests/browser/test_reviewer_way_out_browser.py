"""Reviewers' own navigation and a way out (issue 45, F2, F8, F14, F22, F33, F38) in real Chromium, at desktop
(1280 px, mouse and keyboard) and phone width (390 px, touch): the review card's "Give this item back", the top bar's
links folded behind a Menu button on the phone, and no keyboard hints on a touch screen."""

from __future__ import annotations

import os

import pytest

from annotation.models import Assignment
from annotation.services.disputes import feedback_file
from annotation.services.queue import assignment_give_back, assignment_next
from annotation.services.review import review_submit
from tests.browser.layout import assert_page_fits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("PORTAL_SCREENSHOTS")  # a folder: save what the test saw, to look at it
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}


def _shot(page, name: str) -> None:
    if SHOTS:
        # What is on the screen: a full-page screenshot of a touch context lays the page out again without the touch
        # emulation (Chromium shows the keyboard hints there), so it would not show what a phone shows.
        page.screenshot(path=f"{SHOTS}/{name}.png")


def _first_item(page) -> None:
    """From the review start page: confirm the guidelines and take the first item."""
    page.goto("/review/")
    if page.locator("#guidelines-read").count():
        page.check("#guidelines-read")
    page.click("#next-button")
    page.wait_for_selector("#review-form")
    page.wait_for_load_state("load")  # the page's scripts (its keys) have run, not only its form arrived


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_a_reviewer_gives_an_item_back_and_it_goes_to_someone_else(open_page, queue, make_user, device):
    alice, bob = make_user("reviewer"), make_user("reviewer")
    page = open_page(alice, **(DESKTOP if device == "desktop" else PHONE))
    _first_item(page)
    lease = Assignment.objects.get(reviewer=alice)
    if device == "desktop":
        page.keyboard.press("b")  # the key opens the panel and focuses its first reason
        assert page.locator("#give-back-panel").get_attribute("open") is not None
    else:
        page.locator("#give-back-panel summary").tap()
    page.locator("#give-back-outside_field").check()
    page.locator("#give-back-panel").scroll_into_view_if_needed()
    _shot(page, f"give-back-{device}")
    page.click("#submit-give-back")
    page.wait_for_selector("#review-form")
    assert "will not come back to you" in page.locator(".messages").inner_text()
    following = Assignment.objects.filter(reviewer=alice).exclude(pk=lease.pk).get()
    assert following.item_id != lease.item_id and page.url.endswith(f"/review/{following.pk}/")
    assert Assignment.objects.get(pk=lease.pk).status == Assignment.Status.RELEASED
    _shot(page, f"after-give-back-{device}")
    # Someone else may now take it: Bob works the queue and meets it.
    items = set()
    while (other := assignment_next(reviewer=bob)) is not None:
        items.add(other.item_id)
        assignment_give_back(assignment_id=other.pk, reviewer=bob, reason="other")
    assert lease.item_id in items


def test_on_a_phone_the_top_bar_folds_behind_a_menu_button(open_page, make_user):
    page = open_page(make_user("reviewer"), **PHONE)
    page.goto("/")
    nav = page.locator("header nav")
    assert page.locator("#menu-toggle").is_visible() and not nav.is_visible()
    assert page.locator("header").bounding_box()["height"] < 80  # one line: the brand and the button
    _shot(page, "topbar-phone-closed")
    page.locator("#menu-toggle").tap()
    assert page.locator("#menu-toggle").get_attribute("aria-expanded") == "true"
    for name in ("Review", "My reviews", "My disputes", "Guidelines"):
        assert nav.get_by_role("link", name=name, exact=True).is_visible()
    assert page.locator("header").get_by_role("link", name="API tokens").is_visible()
    _shot(page, "topbar-phone-open")
    page.locator("#menu-toggle").tap()
    assert not nav.is_visible()


def test_on_a_desktop_the_top_bar_shows_every_link_and_no_menu_button(open_page, make_user):
    page = open_page(make_user("reviewer"), **DESKTOP)
    page.goto("/")
    assert not page.locator("#menu-toggle").is_visible()
    for name in ("Review", "My reviews", "Guidelines", "API tokens"):
        assert page.locator("header").get_by_role("link", name=name, exact=True).is_visible()
    _shot(page, "topbar-desktop")


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_keyboard_hints_only_where_there_is_a_keyboard(open_page, queue, make_user, device):
    page = open_page(make_user("reviewer"), **(DESKTOP if device == "desktop" else PHONE))
    _first_item(page)
    submit = page.locator("#submit-review").inner_text()
    if device == "phone":
        assert not page.locator("#shortcuts").is_visible()
        assert "+" not in submit and "Ctrl" not in submit  # not "Submit review +"
        page.locator("#dispute-panel summary").tap()
        assert "press" not in page.locator("label[for=id_quote_text]").inner_text()
        page.goto("/review/")
        assert not page.locator(".kbd-hint").is_visible()
    else:
        assert page.locator("#shortcuts").is_visible() and "Ctrl+Enter" in submit
    _shot(page, f"hints-{device}")


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_the_adjudication_queue_says_why_and_filters_by_it(open_page, queue, make_user, device):
    alice = make_user("reviewer")
    unclear = assignment_next(reviewer=alice)
    review_submit(
        assignment_id=unclear.pk,
        reviewer=alice,
        idempotency_key=unclear.idempotency_key,
        verdict="cannot_tell",
        cannot_tell_reason="excerpt",
        relevance=3,
        comment="",
    )
    noted = assignment_next(reviewer=alice)
    feedback_file(author=alice, assignment_id=noted.pk, idempotency_key=noted.idempotency_key, text="odd wording")
    options = DESKTOP if device == "desktop" else PHONE
    page = open_page(make_user("adjudicator"), **options)
    page.goto("/adjudicate/")
    reasons = page.locator("#adjudication-queue td.queue-reasons").all_inner_texts()
    assert sorted(reasons) == ["A feedback note is open", "A reviewer could not tell from the source"]
    page.select_option("#id_reason", "cannot_tell")
    page.click("#reason-filter button")
    page.wait_for_url("**reason=cannot_tell")
    assert page.locator("#adjudication-queue td.queue-reasons").all_inner_texts() == [
        "A reviewer could not tell from the source"
    ]
    assert page.locator("#adjudication-queue code").inner_text() == unclear.item.uid
    assert_page_fits(page, options["viewport"]["width"], "adjudication-queue-filtered")
