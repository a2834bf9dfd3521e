"""Every page a demo user can reach by following links opens: status 200, one plain-text title, a heading, and
no template syntax or Python ``None`` leaking into the text. What a new user of each role would click through.
The crawler (``crawl``, with the forms each page holds) is shared with the hostile-value crawl."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
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
    """Links, titles, headings, and the forms: ``{"action", "method", "fields": {name: value as submitted},
    "files": [names of file inputs]}``."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.titles: list[str] = []
        self.forms: list[dict] = []
        self.h1 = 0
        self._in_title = False
        self._select: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = {key: value or "" for key, value in attrs}
        form = self.forms[-1] if self.forms and self.forms[-1].get("open") else None
        if tag == "a":
            if attrs.get("href"):
                self.links.append(attrs["href"])
        elif tag == "title":
            self._in_title = True
            self.titles.append("")
        elif tag == "h1":
            self.h1 += 1
        elif tag == "form":
            method = attrs.get("method", "get").lower()
            self.forms.append(
                {"action": attrs.get("action", ""), "method": method, "fields": {}, "files": [], "open": True}
            )
        elif form is not None and tag == "input" and attrs.get("name"):
            kind = attrs.get("type", "text").lower()
            if kind == "file":
                form["files"].append(attrs["name"])
            elif kind not in {"checkbox", "radio"} or "checked" in attrs:
                form["fields"].setdefault(attrs["name"], attrs.get("value", "on" if kind == "checkbox" else ""))
            else:
                form["fields"].setdefault(attrs["name"], None)  # a field the crawl can still fill
        elif form is not None and tag == "button" and attrs.get("name"):
            form["fields"].setdefault(attrs["name"], attrs.get("value", ""))  # a named submit button is a field
        elif form is not None and tag == "select" and attrs.get("name"):
            self._select = attrs["name"]
            form["fields"].setdefault(self._select, None)
        elif form is not None and tag == "option" and self._select:
            if form["fields"][self._select] is None or "selected" in attrs:
                form["fields"][self._select] = attrs.get("value", "")
        elif form is not None and tag == "textarea" and attrs.get("name"):
            self._textarea = attrs["name"]
            form["fields"][self._textarea] = ""

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag == "form" and self.forms:
            self.forms[-1]["open"] = False
        elif tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None

    def handle_data(self, data):
        if self._in_title:
            self.titles[-1] += data
        elif self._textarea and self.forms:
            self.forms[-1]["fields"][self._textarea] += data


def crawl(client, on_page: Callable[[str, _Page], None] | None = None) -> tuple[set[str], dict[str, list[str]]]:
    """Breadth-first from the home page over same-site links; returns (paths visited, {path: problems}).
    ``on_page(path, parsed page)`` sees every HTML page that opened."""
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
            if on_page is not None:
                on_page(path, page)
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
    visited, problems = crawl(client)
    assert not problems, problems
    assert len(visited) >= at_least  # the crawl really went through the role's pages
