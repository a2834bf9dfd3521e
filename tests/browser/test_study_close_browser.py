"""Closing a study asks for confirmation on a page of its own (no inline script), at desktop and phone width:
the study stays open until the confirm button is pressed, and "Keep it open" goes back (usability report F34)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from ranking.models import Study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = os.environ.get("PORTAL_SHOTS")  # a folder: screenshots for a person to look at


@pytest.mark.parametrize("width", [1280, 390])
def test_closing_a_study_is_confirmed_first(page, login, make_user, make_study, width):
    study = make_study(sample_size=2)
    page.set_viewport_size({"width": width, "height": 844})
    login(make_user("organizer"))
    page.goto(f"/organize/studies/{study.pk}/")
    page.click("text=Close the study…")
    expect(page.locator("h1")).to_have_text(f"Close “{study.name}”?")
    study.refresh_from_db()
    assert study.state == Study.State.OPEN
    main = "document.querySelector('main')"
    assert page.evaluate(f"{main}.scrollWidth <= {main}.clientWidth")
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / f"study-close-{width}.png"), full_page=True)

    page.click("text=Keep it open")
    page.wait_for_url(f"**/organize/studies/{study.pk}/")
    study.refresh_from_db()
    assert study.state == Study.State.OPEN

    page.click("text=Close the study…")
    page.click("#close-confirm button[type=submit]")
    page.wait_for_url(f"**/organize/studies/{study.pk}/")
    expect(page.locator("h1 .pill")).to_have_text("Closed")
    study.refresh_from_db()
    assert study.state == Study.State.CLOSED
