"""Usability F23 in real Chromium, at desktop and phone width: ``w`` on the nugget page writes a new item's nuggets
even while a validation is held (it used to reopen the validation, so a typed "new nugget" edited the draft and
Ctrl+Enter sent it to an adjudicator); nothing is focused in a nugget's text on arrival; the row buttons and
"Put this item back" look like buttons that act (dark, underlined) and are disabled where they cannot act."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.models import NuggetSet, NuggetTask, QAItem
from annotation.nugget_workflow import NUGGET_QA_TYPES
from annotation.services.imports import items_import, sources_import
from annotation.services.nugget_files import nuggets_import
from tests.browser.layout import assert_page_fits

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def one_draft(db, organizer):
    """The free-text sample items verified; the last one has an imported draft waiting for validation."""
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    sources_import(paths=[ROOT / "fixtures" / "demo-sources.csv"])
    QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).update(status="verified")
    uid = QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).order_by("pk").last().uid
    nuggets = [
        {"id": "n1", "text": "Imported vital fact.", "importance": "vital"},
        {"id": "n2", "text": "Imported okay fact.", "importance": "okay"},
    ]
    nuggets_import(source=[json.dumps({"item_uid": uid, "nuggets": nuggets})], name="drafts.jsonl", actor=organizer)
    return uid


def _rgb(page, selector):
    return page.eval_on_selector(selector, "e => getComputedStyle(e).color")


@pytest.mark.parametrize("width", [1280, 390])
def test_w_writes_a_new_item_while_a_validation_is_held(page, login, make_user, one_draft, width):
    page.set_viewport_size({"width": width, "height": 900})
    expert = make_user("reviewer")
    login(expert)
    page.goto("/nuggets/")
    with page.expect_navigation():
        page.keyboard.press("v")
    assert "/nuggets/task/" in page.url
    validation = NuggetTask.objects.get(person=expert, stage="validate")
    # Nothing is focused in a nugget's text on arrival: a key meant elsewhere types nothing into the draft.
    assert page.evaluate("document.activeElement.tagName") != "TEXTAREA"
    page.keyboard.type("stray")
    assert "stray" not in page.eval_on_selector_all("#nugget-list textarea", "els => els.map(e => e.value).join()")

    page.goto("/nuggets/")
    with page.expect_navigation():
        page.keyboard.press("w")
    writing = NuggetTask.objects.get(person=expert, stage="write", status="active")
    assert page.url.endswith(f"/nuggets/task/{writing.pk}/")
    assert page.locator("h1").inner_text().startswith("Write nuggets")
    assert "put back for someone else" in page.locator(".messages").inner_text()
    validation.refresh_from_db()
    assert validation.status == "released"
    assert page.evaluate("document.activeElement.tagName") != "TEXTAREA"
    page.keyboard.press("e")
    page.keyboard.type("A new fact.")
    page.keyboard.press("Alt+1")
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    # The draft under validation is untouched; the new item got its own draft.
    assert NuggetSet.objects.filter(item__uid=one_draft).count() == 1
    assert NuggetSet.objects.get(created_by=expert).nuggets.get().text == "A new fact."
    assert_page_fits(page, width, f"nugget-after-write-{width}")


@pytest.mark.parametrize("width", [1280, 390])
def test_row_buttons_look_enabled_exactly_when_they_act(page, login, make_user, one_draft, width):
    page.set_viewport_size({"width": width, "height": 900})
    login(make_user("ranker"))
    page.goto("/nuggets/")
    with page.expect_navigation():
        page.keyboard.press("v")
    rows = page.locator("#nugget-list .nugget-row")
    assert rows.count() == 2

    def state(row, action):
        return rows.nth(row).locator(f'button[data-action="{action}"]').is_enabled()

    assert [state(0, a) for a in ("up", "down", "split", "merge", "drop")] == [False, True, True, True, True]
    assert [state(1, a) for a in ("up", "down", "split", "merge", "drop")] == [True, False, True, False, True]
    # Enabled buttons are the accent blue of links, not the top bar's pale text; disabled ones are grey.
    accent = "rgb(31, 95, 191)"
    assert _rgb(page, '.nugget-row button[data-action="split"]') == accent
    assert _rgb(page, "#put-back") == accent
    assert _rgb(page, '.nugget-row button[data-action="up"]') != accent
    # A new empty last row: the row above can merge again, the empty one cannot split.
    page.click("#add-nugget")
    assert state(1, "merge") and state(1, "down") and not state(2, "split")
    page.keyboard.type("Typed.")
    assert state(2, "split")
    assert_page_fits(page, width, f"nugget-validate-{width}")
