"""In real Chromium, at 1280 px (keyboard) and 390 px (touch): a reviewer picks "cannot tell", the reasons appear
(static script, no inline code: the CSP fixture fails the test otherwise), a submit without a reason sends nothing, a
submit with one stores it; the organizer then finds the item on the vetting dashboard's repair list and opens it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment, QAItem, Review
from tests.browser.layout import assert_page_fits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}


def _first_item(page) -> None:
    page.goto("/review/")
    if page.locator("#guidelines-read").count():
        page.check("#guidelines-read")
    page.click("#next-button")
    page.wait_for_selector("#review-form")
    # The form is in the page before the scripts at its end have run: a key pressed then was lost under load.
    page.wait_for_load_state("load")


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_cannot_tell_asks_why_and_the_organizer_sees_the_item_to_repair(open_page, queue, make_user, device):
    reviewer, organizer = make_user("reviewer"), make_user("organizer")
    options, width = (DESKTOP, 1280) if device == "desktop" else (PHONE, 390)
    page = open_page(reviewer, **options)
    _first_item(page)
    lease = Assignment.objects.get(reviewer=reviewer)
    reasons = page.locator("#cannot-tell-reason")
    expect(reasons).to_be_hidden()

    if device == "desktop":
        page.keyboard.press("u")  # the verdict, and the keyboard goes to the reasons
        expect(reasons).to_be_visible()
        expect(page.locator("#reason-excerpt")).to_be_focused()
        page.keyboard.press("4")
        page.keyboard.press("Enter")  # no reason chosen: the browser keeps the form
    else:
        page.locator("label", has=page.locator("#verdict-cannot_tell")).tap()
        expect(reasons).to_be_visible()
        page.locator("label", has=page.locator("#relevance-4")).tap()
        page.locator("#submit-review").tap()
    assert page.locator("#reason-excerpt").evaluate("el => !el.validity.valid")
    assert not Review.objects.exists() and page.url.endswith(f"/review/{lease.pk}/")
    assert_page_fits(page, width, f"cannot-tell-reasons-{device}")

    # Another verdict hides the reasons (and leaves them out of the form); "cannot tell" brings them back.
    page.locator("#verdict-correct").check()
    expect(reasons).to_be_hidden()
    page.locator("#verdict-cannot_tell").check()
    expect(reasons).to_be_visible()

    if device == "desktop":
        page.keyboard.press("ArrowDown")  # from the first reason to the second, as in any radio group
        expect(page.locator("#reason-ambiguous")).to_be_checked()
        page.keyboard.press("ArrowUp")
        expect(page.locator("#reason-excerpt")).to_be_checked()
        with page.expect_navigation():
            page.keyboard.press("Enter")
    else:
        page.locator("label", has=page.locator("#reason-excerpt")).tap()
        with page.expect_navigation():
            page.locator("#submit-review").tap()
    expect(page.locator(".messages")).to_contain_text("Review saved.")
    stored = Review.objects.get(assignment=lease)
    assert (stored.verdict, stored.cannot_tell_reason, stored.relevance) == ("cannot_tell", "excerpt", 4)

    item = QAItem.objects.get(pk=lease.item_id)
    board = open_page(organizer, **options)
    board.goto("/organize/vetting/")
    row = board.locator("#repair-list tbody tr", has_text=item.uid)
    expect(row).to_contain_text("The excerpt is missing or wrong (1)")
    assert_page_fits(board, width, f"repair-list-{device}")
    with board.expect_navigation():
        row.locator("a").click()
    assert board.url.endswith(f"/items/{item.uid}/")
    expect(board.locator("h1")).to_be_visible()
