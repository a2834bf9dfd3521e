"""The review page in real Chromium at desktop (1280 px) and phone width (390 px, touch): selected excerpt text goes
into the dispute's quote with a "Quote this" button, the quote hint reads whole on either, and when the hold on the
item runs out while the page is open the page says the review will be marked late. The adjudication page of a
PromptCBLUE item names it by its question and warns of no missing excerpt, and fits both widths."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from annotation.models import Assignment, QAItem
from annotation.services.imports import items_import
from annotation.workflow import ItemStatus
from tests.browser.layout import assert_page_fits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
ROOT = Path(__file__).resolve().parents[2]


def _first_item(page) -> None:
    page.goto("/review/")
    if page.locator("#guidelines-read").count():
        page.check("#guidelines-read")
    page.click("#next-button")
    page.wait_for_selector("#review-form")
    page.wait_for_load_state("load")  # the page's scripts (its keys) have run, not only its form arrived


# Select the excerpt's words from the 3rd to the 8th, as a finger's drag does; returns the selected text.
SELECT_WORDS = """() => {
  const node = document.getElementById("excerpt").firstChild;
  const text = node.textContent;
  const starts = [...text.matchAll(/\\S+/g)];
  const range = document.createRange();
  range.setStart(node, starts[2].index);
  range.setEnd(node, starts[7].index + starts[7][0].length);
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  return String(sel);
}"""


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_selected_excerpt_text_becomes_the_quote_with_a_button(open_page, queue, make_user, device):
    options = DESKTOP if device == "desktop" else PHONE
    QAItem.objects.filter(passage__isnull=True).delete()  # a quote needs an excerpt: whichever item comes first
    page = open_page(make_user("reviewer"), **options)
    _first_item(page)
    button = page.locator("#quote-selection")
    assert not button.is_visible()
    if device == "phone":
        page.locator("#dispute-panel summary").tap()
    else:
        page.locator("#dispute-panel summary").click()
    label = page.locator("label[for=id_quote_text]").inner_text()
    if device == "phone":
        assert label == "Quote from the excerpt (optional; select text in the excerpt, then tap “Quote this”)"
    else:
        assert label == "Quote from the excerpt (optional; select text in the excerpt and press q)"
    selected = page.evaluate(SELECT_WORDS)
    assert len(selected.split()) == 6
    button.wait_for(state="visible")
    assert_page_fits(page, options["viewport"]["width"], f"quote-button-{device}")
    if device == "phone":
        button.tap()
    else:
        button.click()
    assert page.locator("#id_quote_text").input_value() == selected.strip()
    assert page.locator("#dispute-panel").get_attribute("open") is not None
    page.wait_for_function("() => document.getElementById('quote-selection').hidden")


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_the_page_says_so_when_the_hold_runs_out_while_it_is_open(open_page, queue, make_user, device):
    options = DESKTOP if device == "desktop" else PHONE
    alice = make_user("reviewer")
    page = open_page(alice, **options)
    _first_item(page)
    lease = Assignment.objects.get(reviewer=alice)
    # The hold now ends three seconds from the page's next load.
    Assignment.objects.filter(pk=lease.pk).update(expires_at=timezone.now() + timedelta(seconds=3))
    page.reload()
    assert page.locator("#lease-until").is_visible() and not page.locator("#lease-ended").is_visible()
    page.locator("#lease-ended").wait_for(state="visible", timeout=10_000)
    assert not page.locator("#lease-until").is_visible()
    text = " ".join(page.locator("#lease-ended").inner_text().split())
    assert text.startswith(
        "Your hold on this item ended 1 min ago; you can still send this review, it will be marked late"
    )
    assert_page_fits(page, options["viewport"]["width"], f"hold-ended-{device}")
    # And the review is still taken, marked late.
    page.locator("#verdict-correct").check()
    page.locator("#relevance-4").check()
    page.click("#submit-review")
    page.wait_for_load_state()
    assert Assignment.objects.get(pk=lease.pk).status == Assignment.Status.SUBMITTED


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_a_promptcblue_item_is_named_by_its_question_without_an_excerpt_warning(open_page, make_user, device):
    items_import(paths=[ROOT / "fixtures" / "promptcblue-sample.jsonl"], fmt="promptcblue")
    item = QAItem.objects.get(uid="pcb-train-demo-0002")
    QAItem.objects.filter(pk=item.pk).update(status=ItemStatus.IN_ADJUDICATION)
    options = DESKTOP if device == "desktop" else PHONE
    page = open_page(make_user("adjudicator"), **options)
    page.goto("/adjudicate/")
    row = page.locator("#adjudication-queue tr", has=page.locator("code", has_text=item.uid))
    assert row.locator("a.queue-link").inner_text().startswith("判断以下两句话的意思是否相同")
    assert_page_fits(page, options["viewport"]["width"], f"pcb-queue-{device}")
    page.goto(f"/adjudicate/{item.uid}/")
    h1 = page.locator("h1").inner_text()
    assert h1.startswith("Adjudicate “判断以下两句话的意思是否相同") and item.uid in h1
    assert page.title().startswith("Adjudicate “判断")
    body = page.locator("main").inner_text()
    assert "Excerpt missing" not in body and "ISBN" not in body
    assert "Task: Classification · CHIP-STS" in body
    assert_page_fits(page, options["viewport"]["width"], f"pcb-adjudication-{device}")
