"""Real Chromium (Debian's /usr/bin/chromium) driven by Playwright against pytest-django's live server.

In CI (CI=true) a missing Chromium is an error, not a skip: browser tests must really run there.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("PORTAL_CHROMIUM", "/usr/bin/chromium")
# Playwright's sync API runs an event loop in this thread; Django's ORM is used synchronously beside it.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="session")
def chromium_browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run must install Debian's chromium")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


# Backends of the live server that are still at work: running a query, or inside a transaction between queries.
_BUSY_BACKENDS = """
    SELECT count(*) FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')
"""


@pytest.fixture(autouse=True)
def _live_server_quiet_before_flush(request):
    """After a browser test, wait until the live server's requests are done with the database, then let the test
    database be flushed. A request still running when the page closed (the ranking page's keepalive draft save)
    holds row locks; the flush's TRUNCATE of every table takes its locks one table at a time, so the two deadlocked
    now and then (seen in CI: "deadlock detected" at teardown)."""
    if "live_server" not in request.fixturenames:
        yield
        return
    # Set up before this fixture finishes setting up, so they are torn down after it: the flush comes last.
    request.getfixturevalue("transactional_db")
    request.getfixturevalue("live_server")
    yield
    from django.db import connection

    deadline = time.monotonic() + 15
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(_BUSY_BACKENDS)
            if cursor.fetchone()[0] == 0:
                break
            time.sleep(0.05)


@pytest.fixture
def page(chromium_browser, live_server):
    """A Chromium page; every browser test fails if the page broke the Content-Security-Policy (a refused
    inline script, handler or style means a feature silently does not work in production)."""
    context = chromium_browser.new_context(base_url=live_server.url, viewport={"width": 1300, "height": 900})
    context.set_default_timeout(10_000)
    pg = context.new_page()
    violations: list[str] = []
    pg.on(
        "console",
        lambda message: (
            violations.append(f"{pg.url}: {message.text}") if "Content Security Policy" in message.text else None
        ),
    )
    yield pg
    context.close()
    assert not violations, violations


@pytest.fixture
def login(page):
    """Sign in through the real allauth form: ``login(user)`` (password of the make_user fixture)."""

    def do_login(user, password: str = "pw-for-tests-123"):
        page.goto("/accounts/login/")
        page.fill("input[name=login]", user.email)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/accounts/login" not in url)
        return page

    return do_login


@pytest.fixture
def make_study(tmp_path):
    """A preference study over two short-answer items, two systems (named SYSNAME-…) plus the reference answer:
    ``make_study(ties_allowed=True, ...)`` with any option of ``study_create``."""
    from annotation.models import QAItem
    from annotation.services.imports import items_import
    from ranking.services.outputs import outputs_import
    from ranking.services.studies import study_create

    def create(**options):
        items_import(paths=[Path(__file__).resolve().parents[2] / "fixtures" / "cliniqlink-sample"])
        items = list(QAItem.objects.filter(qa_type="short_answer"))
        for n, name in enumerate(STUDY_SYSTEMS):
            path = tmp_path / f"{n}.jsonl"
            path.write_text(
                "".join(f'{{"item_uid": "{i.uid}", "response": "Answer {n} to item {i.pk}."}}\n' for i in items)
            )
            outputs_import(system_name=name, paths=[path])
        defaults = {
            "name": "Browser study",
            "systems": STUDY_SYSTEMS,
            "qa_types": ["short_answer"],
            "sample_size": 2,
            "overlap": 1,
        }
        return study_create(**{**defaults, **options}).study

    return create


STUDY_SYSTEMS = ["SYSNAME-ALPHA-7B", "SYSNAME-BETA-13B"]


@pytest.fixture
def queue(db):
    """The public sample (35 items) with its source passages, first reviews only and no gold: a plain review queue.
    (A test file may define its own ``queue``.)"""
    from annotation.models import VettingConfig
    from annotation.services.imports import items_import, sources_import

    root = Path(__file__).resolve().parents[2]
    items_import(paths=[root / "fixtures" / "cliniqlink-sample"])
    sources_import(paths=[root / "fixtures" / "demo-sources.csv"])
    config = VettingConfig.load()
    config.second_share, config.gold_rate = 0.0, 0.0
    config.save()


@pytest.fixture
def open_page(chromium_browser, live_server):
    """``open_page(user, **context options)``: a signed-in page; fails the test on a CSP violation."""
    contexts, violations = [], []

    def opened(user, **options):
        context = chromium_browser.new_context(base_url=live_server.url, **options)
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
        page.goto("/accounts/login/")
        page.fill("input[name=login]", user.email)
        page.fill("input[name=password]", "pw-for-tests-123")
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/accounts/login" not in url)
        return page

    yield opened
    for context in contexts:
        context.close()
    assert not violations, violations


#: The nugget list every item of a browser nugget study gets: a vital fact, an okay one and one to avoid.
STUDY_NUGGETS = (
    ("n1", "The first fact an answer should state.", "vital"),
    ("n2", "A second, less important fact.", "okay"),
    ("n3", "A dangerous claim no answer should make.", "avoid"),
)
NUGGET_SYSTEMS = ["SYSNAME-ALPHA-7B", "SYSNAME-BETA-13B"]


@pytest.fixture
def make_nugget_study(tmp_path):
    """A study over two short-answer items with validated nuggets (:data:`STUDY_NUGGETS`) and two systems whose
    answers have two sentences each: ``make_nugget_study(name=..., ask_ranking=..., ask_spans=...)``, options of
    ``study_create``; nuggets are always asked."""
    from annotation.models import QAItem
    from annotation.services.imports import items_import
    from ranking.services.outputs import outputs_import
    from ranking.services.studies import study_create
    from tests.ranking.nuggets import validated_nuggets

    def create(**options):
        items_import(paths=[Path(__file__).resolve().parents[2] / "fixtures" / "cliniqlink-sample"])
        items = list(QAItem.objects.filter(qa_type="short_answer").order_by("pk")[:2])
        for item in items:
            validated_nuggets(item, STUDY_NUGGETS)
        for n, name in enumerate(NUGGET_SYSTEMS):
            path = tmp_path / f"{n}.jsonl"
            path.write_text(
                "".join(
                    f'{{"item_uid": "{i.uid}", "response": "Answer {n} opens here. It goes on to a second sentence."}}\n'
                    for i in items
                )
            )
            outputs_import(system_name=name, paths=[path])
        settings = {"systems": NUGGET_SYSTEMS, "ask_nuggets": True, "overlap": 1, "include_reference": False}
        return study_create(**(settings | options)).study

    return create
