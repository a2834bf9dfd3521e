"""The Security page's "Sign out everywhere" in Chromium, at desktop (1280 px) and phone (390 px) width: the button
fits the screen, and pressing it signs the person out here and on their other device."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.browser.layout import assert_page_fits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sign_out_everywhere_on_the_security_page_at_desktop_and_phone_width(
    page, login, make_user, chromium_browser, live_server
):
    person = make_user("reviewer", "ranker")
    login(person)
    other_device = chromium_browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    phone = other_device.new_page()
    phone.goto("/accounts/login/")
    phone.fill("input[name=login]", person.email)
    phone.fill("input[name=password]", "pw-for-tests-123")
    phone.click("button[type=submit]")
    phone.wait_for_url(lambda url: "/accounts/login" not in url)

    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(reverse("mfa_index"))
        if width < 700:  # on a phone the top bar's links fold behind its Menu button
            page.get_by_role("button", name="Menu").click()
        page.get_by_role("link", name="Security").wait_for()
        card = page.locator("#sessions")
        assert "Signed-in devices" in card.inner_text() and "API tokens" in card.inner_text()
        button = card.get_by_role("button", name="Sign out everywhere")
        button.scroll_into_view_if_needed()
        box = button.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, box
        assert_page_fits(page, width, "security-sessions")

    page.get_by_role("button", name="Sign out everywhere").click()
    page.wait_for_url(lambda url: "/accounts/login/" in url)
    assert "signed out on every device" in page.locator(".messages").inner_text()
    page.goto("/")
    assert "/accounts/login/" in page.url

    phone.goto("/")  # the other device, at its next request
    assert "/accounts/login/" in phone.url
    other_device.close()
