"""The layout check every browser test of a page with plots makes, at desktop and phone width."""

from __future__ import annotations

import os

SHOTS = os.environ.get("PORTAL_SCREENSHOTS")  # a folder: save what the test saw, to look at it


def assert_page_fits(page, width: int, shot: str = "", *, plots_fit: bool = True) -> None:
    """Every plot on the page has loaded (and, with ``plots_fit``, is no wider than the screen); nothing in the
    page's content is wider than the screen (wide tables scroll inside their card; the top bar is the layout's,
    checked with the layout). Saves a full-page screenshot as ``shot`` when PORTAL_SCREENSHOTS names a folder."""
    for img in page.locator("img.plot").all():
        img.scroll_into_view_if_needed()
        assert img.evaluate("i => i.decode().then(() => i.naturalWidth > 0)"), img.get_attribute("src")
        if plots_fit:
            assert img.bounding_box()["width"] <= width
    if SHOTS and shot:
        page.screenshot(path=f"{SHOTS}/{shot}-{width}.png", full_page=True)
    wide = page.evaluate(
        "w => [...document.querySelectorAll('main *')]"
        ".filter(e => !e.closest('.table-scroll') && e.getBoundingClientRect().right > w + 1)"
        ".map(e => e.tagName + '.' + e.className)",
        width,
    )
    assert not wide, (page.url, wide)
