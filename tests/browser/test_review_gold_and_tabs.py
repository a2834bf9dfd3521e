"""In real Chromium, on a desktop and a 390 px phone: a gold item looks like any other item in the review page's
header ("N items left for you · batch …") and is listed and reopened with ``z`` like any review afterwards; a
different review sent from a second tab on an answered lease is not reported as saved, shows what is stored, keeps
what was typed, and can be made a change of the stored review (security report findings 3 and 9, usability F40)."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from annotation.models import Assignment, GoldAnswer, ImportBatch, QAItem, Review, VettingConfig
from annotation.services import queue as queue_service
from annotation.services.gold import gold_mark
from annotation.services.imports import items_import, sources_import
from tests.browser.layout import assert_page_fits

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = [1280, 390]


@pytest.fixture
def queue(db):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    sources_import(paths=[ROOT / "fixtures" / "demo-sources.csv"])
    _gold_rate(0.0, second_share=0.0)


def _gold_rate(rate: float, **more) -> None:
    config = VettingConfig.load()
    config.gold_rate = rate
    for name, value in more.items():
        setattr(config, name, value)
    config.save()


def _signed_in(chromium_browser, live_server, user, width: int):
    context = chromium_browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.goto("/accounts/login/", timeout=60_000)  # the live server's first page can take long on a busy machine
    page.fill("input[name=login]", user.email)
    page.fill("input[name=password]", "pw-for-tests-123")
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login" not in url)
    return context, page


def _press_and_wait(page, key: str):
    with page.expect_navigation():
        page.keyboard.press(key)


def _answer(page, verdict_key="c", relevance_key="4"):
    page.keyboard.press(verdict_key)
    page.keyboard.press(relevance_key)
    _press_and_wait(page, "Enter")


def _outlook(page) -> tuple[int, str]:
    text = page.locator("#queue-outlook").inner_text()
    left = int(text.split(" ", 1)[0])
    batch = re.search(r"batch “(.*?)”", text)
    return left, batch.group(1) if batch else ""


@pytest.mark.parametrize("width", WIDTHS)
def test_a_gold_item_moves_the_count_names_the_queues_batch_and_is_reopened_with_z(
    chromium_browser, live_server, make_user, organizer, queue, monkeypatch, width
):
    # The queue's gold draw (random.random() in the live server's thread) is fixed per step: 5 % does the same by
    # chance on every twentieth item.
    draw = {"next": 0.99}
    monkeypatch.setattr(queue_service, "random", SimpleNamespace(random=lambda: draw["next"]))
    _gold_rate(0.5)
    old = ImportBatch.objects.create(name="Old finished batch", fmt="cliniqlink", created_by=organizer)
    golds = list(QAItem.objects.filter(qa_type="short_answer").order_by("id")[:2])
    QAItem.objects.filter(pk__in=[g.pk for g in golds]).update(batch=old)
    for item in golds:
        gold_mark(item=item, expected_verdict="correct", by=organizer)
    reviewer = make_user("reviewer")
    context, page = _signed_in(chromium_browser, live_server, reviewer, width)
    try:
        page.goto("/review/")
        page.check("#guidelines-read")
        _press_and_wait(page, "n")
        seen = [_outlook(page)]
        for gold_next in (False, True, False):
            draw["next"] = 0.0 if gold_next else 0.99
            _answer(page)
            lease = Assignment.objects.get(reviewer=reviewer, status="active")
            assert (lease.stage == "gold") == gold_next
            seen.append(_outlook(page))
            assert_page_fits(page, width, "review-gold-header")
        counts, batches = [n for n, _ in seen], {b for _, b in seen}
        assert [a - b for a, b in zip(counts, counts[1:], strict=False)] == [1, 1, 1], seen
        assert batches == {ImportBatch.objects.exclude(pk=old.pk).get().name}, seen

        # The gold item was the last one answered: z on the open item reopens it, as a review that can no longer
        # be changed, and "My recent reviews" lists it.
        gold_lease = Assignment.objects.get(reviewer=reviewer, stage="gold")
        assert GoldAnswer.objects.filter(assignment=gold_lease).exists()
        _press_and_wait(page, "z")
        assert page.url.endswith(f"/review/mine/{gold_lease.pk}/")
        assert page.locator("#edit-refused").is_visible() and page.locator("#edit-form").count() == 0
        assert "gold" not in page.locator("#edit-refused").inner_text().lower()
        assert_page_fits(page, width, "review-gold-answer")
        page.goto("/review/mine/")
        assert gold_lease.item.uid in page.locator("#my-reviews").inner_text()
        assert_page_fits(page, width, "review-mine-with-gold")
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_second_tab_sending_a_different_review_is_told_it_was_not_saved(
    chromium_browser, live_server, make_user, queue, width
):
    _gold_rate(0.0, second_share=1.0)
    reviewer = make_user("reviewer")
    context, tab_one = _signed_in(chromium_browser, live_server, reviewer, width)
    try:
        tab_one.goto("/review/")
        tab_one.check("#guidelines-read")
        _press_and_wait(tab_one, "n")
        lease_url = tab_one.url
        tab_two = context.new_page()
        tab_two.goto(lease_url)

        tab_one.keyboard.press("i")
        tab_one.keyboard.press("2")
        tab_one.keyboard.press("e")
        tab_one.keyboard.type("first tab")
        tab_one.keyboard.press("Escape")
        _press_and_wait(tab_one, "Enter")
        assert "Review saved." in tab_one.content()

        tab_two.keyboard.press("c")
        tab_two.keyboard.press("5")
        tab_two.keyboard.press("e")
        tab_two.keyboard.type("second tab, different verdict")
        tab_two.keyboard.press("Escape")
        _press_and_wait(tab_two, "Enter")
        notice = tab_two.locator("#already-sent")
        assert notice.is_visible()
        assert "not saved" in notice.inner_text() and "Review saved." not in tab_two.content()
        assert "Incorrect" in tab_two.locator("#stored-review").inner_text()
        assert "first tab" in tab_two.locator("#stored-review").inner_text()
        assert tab_two.locator("#id_comment").input_value() == "second tab, different verdict"  # kept, to copy
        assert tab_two.locator("#verdict-correct").is_checked()
        assert_page_fits(tab_two, width, "review-already-sent")

        with tab_two.expect_navigation():
            tab_two.click("#apply-change")
        assert "was changed" in tab_two.content()
        stored = Review.objects.get(reviewer=reviewer)
        assert (stored.verdict, stored.relevance, stored.comment) == ("correct", 5, "second tab, different verdict")
    finally:
        context.close()
