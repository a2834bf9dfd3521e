"""An organizer freezes a release through the form in Chromium: the form takes one benchmark by default (the
PromptCBLUE items stay out), the preview updates when the rule changes, and the release page says what it holds;
a release of all benchmarks says what its ClinIQLink export leaves out. Narrow screens keep the page's width."""

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.models import QAItem, Release
from annotation.services.imports import items_import

ROOT = Path(__file__).resolve().parents[2]
SHOTS = os.environ.get("PORTAL_SHOTS")  # a folder: screenshots of the confirmation for a person to look at


def _shot(page, name):
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / name), full_page=True)


pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _vetted_items_of_both_benchmarks():
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    items_import(paths=[ROOT / "fixtures" / "promptcblue-sample.jsonl"], fmt="promptcblue")
    keep = list(QAItem.objects.filter(benchmark="cliniqlink").order_by("id").values_list("pk", flat=True)[:17])
    keep += list(QAItem.objects.filter(benchmark="promptcblue").order_by("id").values_list("pk", flat=True)[:3])
    QAItem.objects.filter(pk__in=keep).update(
        status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary"
    )


def test_freezing_through_the_form_leaves_other_benchmarks_out_by_default(page, login, make_user):
    _vetted_items_of_both_benchmarks()
    login(make_user("organizer"))
    page.goto("/releases/")
    assert page.locator("#id_benchmark").input_value() == "cliniqlink"
    assert page.locator("[data-preview-count]").inner_text() == "17"

    # Changing the rule refreshes the preview in place (htmx, no inline script).
    page.select_option("#id_benchmark", "")
    # expect() polls from Playwright's side: a string for wait_for_function would be an eval the CSP refuses.
    expect(page.locator("[data-preview-count]")).to_have_text("20")
    assert "3 PromptCBLUE" in page.locator("#preview").inner_text()
    page.select_option("#id_benchmark", "cliniqlink")
    expect(page.locator("[data-preview-count]")).to_have_text("17")

    page.fill("#id_name", "cliniqlink-2025")
    page.click("text=Freeze (immutable)")
    # A confirmation first: what will be frozen, nothing frozen yet, and no CSRF token in the address bar.
    expect(page.locator("h1")).to_have_text("Freeze cliniqlink-2025@1?")
    assert "csrfmiddlewaretoken" not in page.url
    assert page.locator("[data-confirm-count]").inner_text() == "17"
    assert not Release.objects.exists()
    _shot(page, "release-confirm-desktop.png")
    page.click("text=Freeze 17 items as cliniqlink-2025@1")
    page.wait_for_url("**/releases/cliniqlink-2025@1/")
    assert "Frozen cliniqlink-2025@1 with 17 items." in page.content()
    assert page.locator("#release-rule").inner_text().startswith("benchmark ClinIQLink only;")
    coverage = page.locator("#release-coverage").inner_text()
    assert "The ClinIQLink export holds all 17 items of the release." in coverage
    release = Release.objects.get(name="cliniqlink-2025")
    assert set(release.items.values_list("item__benchmark", flat=True)) == {"cliniqlink"}

    # On purpose, all benchmarks: the page says what the ClinIQLink zip cannot hold.
    page.goto("/releases/")
    page.select_option("#id_benchmark", "")
    page.fill("#id_name", "Everything at once")
    page.click("text=Freeze (immutable)")
    page.click("text=Freeze 20 items as Everything at once@1")
    page.wait_for_url("**/releases/Everything%20at%20once@1/")
    notice = page.locator('#release-coverage [data-format="cliniqlink"]').inner_text()
    assert notice.startswith("The ClinIQLink export holds 17 of the 20 items; 3 PromptCBLUE items are only in")

    page.set_viewport_size({"width": 390, "height": 844})
    confirm = "/releases/?name=phone&benchmark=cliniqlink&final_verdict=correct&min_relevance=5&confirm=1"
    for url in ("/releases/", "/releases/Everything%20at%20once@1/", confirm):
        page.goto(url)
        # The page's own content (the top bar is the layout's): wide tables scroll inside their cards.
        main = "document.querySelector('main')"
        assert page.evaluate(f"{main}.scrollWidth <= {main}.clientWidth"), url
        assert page.evaluate(f"{main}.getBoundingClientRect().right") <= 390 + 1, url
    expect(page.locator("h1")).to_have_text("Freeze phone@1?")
    _shot(page, "release-confirm-phone.png")
    page.click("text=Freeze 17 items as phone@1")
    page.wait_for_url("**/releases/phone@1/")
