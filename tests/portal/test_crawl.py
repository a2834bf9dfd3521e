"""Every page a demo user can reach by following links opens: status 200, one plain-text title, a heading, and
no template syntax or Python ``None`` leaking into the text. What a new user of each role would click through."""

from __future__ import annotations

import re
from collections import deque
from html.parser import HTMLParser
from urllib.parse import urldefrag, urlsplit

import pytest
from django.core.management import call_command

from portal.models import User

pytestmark = pytest.mark.django_db

# Not crawled: sign-out and account pages (allauth's own), the admin, the JSON API and its schema viewer, media.
SKIP = re.compile(r"^/(accounts|admin|api|static|media)/")
MAX_PAGES = 250


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.titles: list[str] = []
        self.h1 = 0
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.links.append(href)
        elif tag == "title":
            self._in_title = True
            self.titles.append("")
        elif tag == "h1":
            self.h1 += 1

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.titles[-1] += data


def _crawl(client) -> tuple[set[str], dict[str, list[str]]]:
    """Breadth-first from the home page over same-site links; returns (paths visited, {path: problems})."""
    seen, queue, problems = {"/"}, deque(["/"]), {}
    while queue and len(seen) <= MAX_PAGES:
        path = queue.popleft()
        response = client.get(path, follow=True)
        found = []
        if response.status_code != 200:
            found.append(f"status {response.status_code}")
        content_type = response.get("Content-Type", "")
        if (
            response.status_code == 200
            and content_type.startswith("text/html")
            and not response.get("Content-Disposition")
        ):
            html = response.content.decode()
            page = _Page()
            page.feed(html)
            if len(page.titles) != 1 or "<" in page.titles[0] or not page.titles[0].strip():
                found.append(f"title {page.titles!r}")
            if page.h1 < 1:
                found.append("no <h1>")
            text = re.sub(r"<script.*?</script>", "", html, flags=re.S)
            if "{{" in text or "{%" in text:
                found.append("unrendered template syntax")
            if re.search(r">\s*None\s*<", text):
                found.append("'None' shown as a value")
            for href in page.links:
                target = urldefrag(href)[0]
                parts = urlsplit(target)
                if parts.scheme or parts.netloc or not parts.path.startswith("/") or SKIP.match(parts.path):
                    continue
                if target not in seen:
                    seen.add(target)
                    queue.append(target)
        if found:
            problems[path] = found
    return seen, problems


@pytest.mark.parametrize(
    "email, at_least",
    [("organizer@demo.portal", 40), ("reviewer1@demo.portal", 3), ("adjudicator@demo.portal", 4),
     ("ranker1@demo.portal", 3)],
)  # fmt: skip
def test_every_linked_page_opens_for_each_role(client, email, at_least):
    call_command("load_demo", verbosity=0)  # inside the test's transaction: rolled back afterwards
    client.force_login(User.objects.get(email=email))
    visited, problems = _crawl(client)
    assert not problems, problems
    assert len(visited) >= at_least  # the crawl really went through the role's pages
