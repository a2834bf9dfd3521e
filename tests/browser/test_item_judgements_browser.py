"""An organizer reads an item's reviews with their comments, its final verdict, gold status and disputes, opens a
dispute from the item page, and downloads the judgement export from the vetting page, at 1280 and 390 px (F39)."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.models import Dispute, QAItem, Review
from annotation.services.imports import items_import
from portal.models import AuditEntry
from tests.browser.layout import assert_page_fits
from tests.reviews import done_review

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_organizer_reads_the_judgements_acts_and_downloads(page, login, make_user, width):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample" / "TF.json"])
    rejected, fresh = QAItem.objects.order_by("id")[:2]
    a, b = make_user("reviewer"), make_user("reviewer")
    for who, stage in ((a, "primary"), (b, "secondary")):
        done_review(rejected, who, stage, "incorrect", 2)
    Review.objects.filter(reviewer=b).update(comment="The excerpt says the opposite.")
    QAItem.objects.filter(pk=rejected.pk).update(
        status="rejected", final_verdict="incorrect", final_relevance=2, final_source="agreement"
    )
    organizer = make_user("organizer")
    page.set_viewport_size({"width": width, "height": 900})
    login(organizer)

    page.goto(f"/items/{rejected.uid}/")
    expect(page.locator("#outcome")).to_contain_text("Final verdict: Incorrect, GP relevance 2 (two reviews agreed)")
    expect(page.locator("#reviews")).to_contain_text("The excerpt says the opposite.")
    assert_page_fits(page, width, "item-judgements")

    page.goto(f"/items/{fresh.uid}/")
    page.select_option("#actions select[name=category]", "ambiguous")
    page.fill("#actions textarea[name=text]", "Two answers fit the question.")
    with page.expect_navigation():
        page.click("text=Open a dispute")
    expect(page.locator("body")).to_contain_text("Dispute opened")
    page.goto(f"/items/{fresh.uid}/")
    expect(page.locator("#disputes")).to_contain_text("Two answers fit the question.")
    expect(page.locator("#outcome")).to_contain_text("No final verdict yet.")

    page.goto("/organize/vetting/")
    assert_page_fits(page, width, "vetting-judgement-export")
    with page.expect_download() as download:
        page.locator("#judgement-export a", has_text="CSV").first.click()
    assert download.value.suggested_filename.startswith("judgements-pseudonymised-")
    text = Path(download.value.path()).read_text()
    assert "The excerpt says the opposite." in text and b.email not in text
    assert AuditEntry.objects.filter(action="judgements_exported", actor=organizer).count() == 1
    assert Dispute.objects.filter(item=fresh, raised_by=organizer).count() == 1
