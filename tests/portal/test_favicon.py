"""Usability F30: every page names the portal's icon, so browsers stop asking for /favicon.ico (a 404 in the
console of the printable report) and the tab shows the portal's mark."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ICON = re.compile(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">')


def test_pages_link_an_icon_that_is_served(client, reviewer):
    client.force_login(reviewer)
    page = client.get("/").content.decode()
    href = ICON.search(page).group(1)
    icon = client.get(href)
    assert icon.status_code == 200 and icon["Content-Type"].startswith("image/svg+xml")
    assert b"<svg" in b"".join(icon.streaming_content if icon.streaming else [icon.content])


def test_every_template_with_its_own_head_links_the_icon():
    heads = [
        path
        for path in ROOT.glob("*/templates/**/*.html")
        if "<head" in path.read_text(encoding="utf-8") and "swagger_ui" not in path.name
    ]
    assert heads, "no template with a <head>"
    for path in heads:
        assert ICON.search(path.read_text(encoding="utf-8")), f"{path} has no icon link"
