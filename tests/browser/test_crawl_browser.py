"""Every page a demo user reaches from their home page, in real Chromium at a phone's width (390 px), as each demo
role: no developer output in the visible text (Python values, internal names, unrounded numbers, pseudonyms), no
error page outside the portal's layout, no page wider than the screen, no Content-Security-Policy violation.

The crawl follows same-origin links breadth-first and opens each URL pattern once (``/items/12/`` stands for every
item page). Not visited: sign-out, the admin, the JSON API and its schema viewer, static files and downloads.
"""

from __future__ import annotations

import re
import time
from collections import deque
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.urls import Resolver404, resolve

from annotation.workflow import Action, ItemStatus, Verdict

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
ROLES = {
    "organizer": ("organizer@demo.portal", "freeze-and-export-25"),
    "reviewer": ("reviewer1@demo.portal", "check-every-answer-25"),
    "adjudicator": ("adjudicator@demo.portal", "settle-the-disputes-25"),
    "ranker": ("ranker1@demo.portal", "order-the-answers-25"),
}
SKIP = re.compile(
    r"^/(admin|api|static|media)(/|$)|^/accounts/logout|/(export|download)s?(/|$)|\.(csv|json|jsonl|zip)$"
)
MAX_PAGES_PER_ROLE = 120

# What a person should never read: Python containers and values, and the workflow's internal names.
RAW_NAMES = sorted({v for choices in (ItemStatus, Action, Verdict) for v in choices.values if "_" in v})
DEVELOPER_OUTPUT = [
    ("a Python dict", re.compile(r"\{'")),
    ("a Python list", re.compile(r"\['")),
    # None as a value ("relevance: None", "None," inside a repr); "None ticked" and "None yet." are English.
    ("None", re.compile(r"[:=(\[{]\s*None\b|\bNone\s*[,)}\]]")),
    ("NaN", re.compile(r"\b(nan|NaN)\b")),
    ("a workflow state key", re.compile(r"\b(" + "|".join(RAW_NAMES) + r"|needs_adjudication)\b")),
    # A file name (short_inverse.json) is what the person types or uploads: allowed.
    ("a snake_case identifier", re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b(?!\.[a-z])")),
    # A figure is rounded to what it supports; five decimals or more is a float printed as it came.
    ("an unrounded number", re.compile(r"(?<![\d.])\d+\.\d{5,}(?![\d.])")),
    # People are named on pages (organizers) or not at all; their pseudonyms are for exports.
    ("a pseudonym", re.compile(r"\bannotator-[0-9a-f]{8}\b")),
]
# A text node that is nothing but one of these is a value the template printed raw.
RAW_VALUES = {"None", "nan", "NaN", "null", "undefined"}

# The text a person sees: visible text nodes outside code samples (<code>, <pre>, <kbd> show names on purpose).
VISIBLE_TEXT_JS = """() => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const parts = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || el.closest('code, pre, kbd, samp, script, style, template, noscript')) continue;
    if (!el.checkVisibility()) continue;
    parts.push(node.textContent);
  }
  return parts;
}"""
LINKS_JS = """() => Array.from(document.querySelectorAll('a[href]'))
  .filter(a => !a.hasAttribute('download')).map(a => a.href)"""


def _pattern(path: str) -> str | None:
    """The URL pattern ``path`` belongs to, or None for a path no view answers."""
    try:
        match = resolve(path)
    except Resolver404:
        return None
    return match.route or match.view_name


def _problems(page, response) -> list[str]:
    found = []
    status = response.status if response else 0
    layout = page.evaluate("() => !!document.querySelector('header.topbar') && !!document.querySelector('main')")
    if status >= 400 and not layout:
        found.append(f"status {status} without the portal's layout")
    elif status >= 500:
        found.append(f"status {status}")
    nodes = page.evaluate(VISIBLE_TEXT_JS)
    raw = sorted({node.strip() for node in nodes} & RAW_VALUES)
    if raw:
        found.append(f"a raw value shown: {', '.join(raw)}")
    text = " ".join(nodes)
    for what, pattern in DEVELOPER_OUTPUT:
        match = pattern.search(text)
        if match:
            start = max(0, match.start() - 40)
            found.append(f"{what} in the text: …{text[start : match.end() + 40].strip()}…")
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    if width[0] > width[1] + 1:
        found.append(f"wider than the screen: {width[0]} px in a {width[1]} px window")
    return found


def _crawl(context, base: str, email: str, password: str) -> tuple[list[str], dict[str, list[str]]]:
    page = context.new_page()
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login" not in url)
    seen_patterns, visited, problems = set(), [], {}
    queue = deque(["/"])
    while queue and len(visited) < MAX_PAGES_PER_ROLE:
        path = queue.popleft()
        try:
            response = page.goto(f"{base}{path}", wait_until="load")
        except Exception as error:  # a link that starts a download opens no page
            if "Download is starting" in str(error):
                continue
            raise
        if response is not None and response.status == 405:
            continue  # a POST-only address
        if not (response and response.headers.get("content-type", "").startswith("text/html")):
            continue
        visited.append(path)
        found = _problems(page, response)
        if found:
            problems[path] = found
        for href in page.evaluate(LINKS_JS):
            parts = urlsplit(href)
            if f"{parts.scheme}://{parts.netloc}" != base or SKIP.search(parts.path):
                continue
            pattern = _pattern(parts.path)
            if pattern is None or pattern in seen_patterns:
                continue
            seen_patterns.add(pattern)
            queue.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    page.close()
    return visited, problems


def test_every_page_of_every_demo_role_reads_well_on_a_phone(chromium_browser, live_server):
    started = time.monotonic()
    call_command("load_demo", verbosity=0)
    loaded = time.monotonic() - started
    report, counts = {}, {}
    for role, (email, password) in ROLES.items():
        context = chromium_browser.new_context(viewport=PHONE, is_mobile=False)
        context.set_default_timeout(15_000)
        violations: list[str] = []
        context.on(
            "console",
            lambda message, bag=violations: (
                bag.append(message.text) if "Content Security Policy" in message.text else None
            ),
        )
        visited, problems = _crawl(context, live_server.url, email, password)
        context.close()
        counts[role] = len(visited)
        if violations:
            problems["(CSP)"] = violations
        for path, found in problems.items():
            report[f"{role} {path}"] = found
    print(
        f"demo loaded in {loaded:.0f} s; crawl of {sum(counts.values())} pages in {time.monotonic() - started - loaded:.0f} s"
    )
    assert counts["organizer"] >= 15 and min(counts.values()) >= 3, counts  # the crawl really went through pages
    assert not report, "\n".join(f"{where}: {'; '.join(found)}" for where, found in report.items())
