"""Usability F36 in real Chromium: a table wider than its card (a phone, 390 px) shows a shadow at the edge where
more of it lies, the right edge first and the left one once scrolled to the end; a table that fits (desktop,
1280 px) shows none. The table's own text and lines are made transparent for the measurement, so only the
container's background (the hint) is measured."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image, ImageStat

from annotation.services.imports import items_import
from tests.browser.layout import assert_page_fits

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STRIP = 4  # px at each edge of the scrolling box


def _edges(box):
    """Mean darkness (0 white … 255 black) of the left and right STRIP-px columns of the element's screenshot."""
    image = Image.open(io.BytesIO(box.screenshot())).convert("L")
    width, height = image.size
    scale = width / box.bounding_box()["width"]  # the screenshot is in device pixels
    strip = max(1, round(STRIP * scale))

    def darkness(left):
        return 255 - ImageStat.Stat(image.crop((left, 0, left + strip, height))).mean[0]

    return darkness(0), darkness(width - strip)


@pytest.mark.parametrize("width", [1280, 390])
def test_a_table_that_scrolls_shows_it_at_the_edge(page, login, organizer, width):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    page.set_viewport_size({"width": width, "height": 900})
    login(organizer)
    page.goto("/organize/vetting/")
    box = page.locator(".table-scroll").first
    box.scroll_into_view_if_needed()
    box.evaluate(
        "b => b.querySelectorAll('*').forEach(e => { e.style.color = 'transparent';"
        " e.style.borderColor = 'transparent'; e.style.background = 'transparent'; })"
    )
    overflows = box.evaluate("b => b.scrollWidth > b.clientWidth + 1")
    left, right = _edges(box)
    if width == 1280:
        assert not overflows
        assert left < 3 and right < 3, (left, right)  # fits: no hint
        assert_page_fits(page, width, "table-scroll")
        return
    assert overflows
    assert right > 8 and right > left + 6, (left, right)  # more to the right
    box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
    page.wait_for_timeout(100)
    left, right = _edges(box)
    assert left > 8 and left > right + 6, (left, right)  # at the end: more to the left only
    assert_page_fits(page, width, "table-scroll")
