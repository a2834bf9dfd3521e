"""An organizer signs in with the real login form and opens an item of each type in Chromium."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.models import QAItem
from annotation.qa_types import CLINIQLINK_TYPES, expects_source_excerpt
from annotation.services.imports import items_import, sources_import

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_organizer_logs_in_and_opens_an_item_of_each_type(page, login, make_user):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    items_import(paths=[ROOT / "fixtures" / "promptcblue-sample.jsonl"], fmt="promptcblue")
    sources_import(paths=[ROOT / "fixtures" / "demo-sources.csv"])
    login(make_user("organizer"))
    page.goto("/items/")
    assert page.locator("table tbody tr").count() == 38
    for qa_type in [*CLINIQLINK_TYPES, "generic"]:
        item = QAItem.objects.filter(qa_type=qa_type).first()
        page.goto(f"/items/?qa_type={qa_type}")
        # The click navigates; wait for the item page before reading it (is_visible does not wait).
        with page.expect_navigation():
            page.click(f"text={item.uid}")
        body = page.locator(f'.item-body[data-qa-type="{qa_type}"]')
        expect(body).to_be_visible()
        assert item.question.splitlines()[0][:30] in body.inner_text()
        if qa_type == "multiple_choice":
            assert body.locator("ol.options li").count() == len(item.options)
        if qa_type in ("multi_hop", "multi_hop_inverse"):
            assert body.locator("ol.steps li").count() == len(item.reasoning)
        if qa_type == "multi_hop_inverse":
            assert "Step" in body.locator("ul.faulty").inner_text()
        if item.passage_id:
            excerpt = page.locator("#excerpt")
        else:  # a missing excerpt is flagged only where the benchmark has sources
            excerpt = page.locator(".excerpt.missing" if expects_source_excerpt(item.benchmark) else "#no-source")
        assert excerpt.is_visible()
