"""An expert writes an item's nuggets in real Chromium with the keyboard only: adds, orders, rates, splits, merges,
drops and sends; a refused list keeps every typed word. (The page fixture fails on any CSP violation.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import NuggetSet, QAItem
from annotation.nugget_workflow import NUGGET_QA_TYPES
from annotation.services.imports import items_import, sources_import

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def verified(db):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    sources_import(paths=[ROOT / "fixtures" / "demo-sources.csv"])
    QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).update(status="verified")


def _texts(page):
    return page.eval_on_selector_all("#nugget-list textarea", "els => els.map(e => e.value)")


def _importances(page):
    return page.eval_on_selector_all("#nugget-list select", "els => els.map(e => e.value)")


def test_expert_writes_nuggets_with_the_keyboard_only(page, login, make_user, verified):
    writer = make_user("reviewer")
    login(writer)
    page.goto("/nuggets/")
    with page.expect_navigation():
        page.keyboard.press("w")
    assert "/nuggets/task/" in page.url and page.locator("#shortcuts").is_visible()
    # Nothing has the focus on arrival (usability F23); e starts editing the first nugget, Enter adds the next.
    page.keyboard.press("e")
    page.keyboard.type("Okay fact first.")
    page.keyboard.press("Alt+2")
    page.keyboard.press("Enter")
    page.keyboard.type("Vital fact. Wrong claim.")
    # Split at the cursor, placed before "Wrong".
    for _ in range(len("Wrong claim.")):
        page.keyboard.press("ArrowLeft")
    page.keyboard.press("Alt+s")
    page.keyboard.press("Alt+3")  # the split-off part is the claim to avoid
    page.keyboard.press("Enter")
    page.keyboard.type("Extra")
    page.keyboard.press("Enter")
    page.keyboard.type("words.")
    page.keyboard.press("Alt+ArrowUp")  # "words." above "Extra"
    page.keyboard.press("Alt+ArrowDown")  # back below it
    page.locator("#nugget-list textarea").nth(3).focus()  # "Extra"
    page.keyboard.press("Alt+m")  # merged with the next: "Extra words."
    assert _texts(page) == ["Okay fact first.", "Vital fact.", "Wrong claim.", "Extra words."]
    page.keyboard.press("Alt+Backspace")  # drop it
    assert _texts(page) == ["Okay fact first.", "Vital fact.", "Wrong claim."]
    assert _importances(page) == ["okay", "okay", "avoid"]
    # No vital nugget: refused, and every typed word is still there.
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    assert "mark at least one nugget vital" in page.locator("#list-problems").inner_text()
    assert _texts(page) == ["Okay fact first.", "Vital fact.", "Wrong claim."]
    page.locator("#nugget-list textarea").nth(1).focus()
    page.keyboard.press("Alt+1")
    page.keyboard.press("Alt+ArrowUp")  # the vital fact first
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    draft = NuggetSet.objects.get(created_by=writer)
    assert [(n.text, n.importance) for n in draft.nuggets.all()] == [
        ("Vital fact.", "vital"),
        ("Okay fact first.", "okay"),
        ("Wrong claim.", "avoid"),
    ]


def test_reload_keeps_the_list_and_validator_accepts_with_alt_a(page, login, make_user, verified, organizer):
    import json

    from annotation.services.nugget_files import nuggets_import

    writer = make_user("reviewer")
    login(writer)
    page.goto("/nuggets/")
    with page.expect_navigation():
        page.keyboard.press("w")
    page.keyboard.press("e")
    page.keyboard.type("Kept across a reload.")
    page.keyboard.press("Alt+1")
    page.reload()
    assert _texts(page) == ["Kept across a reload."]
    assert _importances(page) == ["vital"]

    uid = QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).order_by("pk").last().uid
    line = json.dumps({"item_uid": uid, "nuggets": [{"id": "n1", "text": "Imported fact.", "importance": "vital"}]})
    nuggets_import(source=[line], name="drafts.jsonl", actor=organizer)
    page.context.clear_cookies()
    validator = make_user("ranker")
    login(validator)
    page.goto("/nuggets/")
    with page.expect_navigation():
        page.keyboard.press("v")
    assert _texts(page) == ["Imported fact."]
    with page.expect_navigation():
        page.keyboard.press("Alt+a")
    assert NuggetSet.objects.get(item__uid=uid).status == "validated"
