"""The reviewers' reliability as its users meet it, in real Chromium at desktop and phone width: the organizer's
reliability page (grouped by training level, the drift called out), the reviewer's recalibration prompt on their
home page, and the release page's evaluation card with its estimate of wrong items."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import override_settings

from annotation.models import QAItem, VettingConfig
from annotation.services.adjudication import item_adjudicate
from annotation.services.imports import items_import, sources_import
from annotation.services.queue import assignment_next
from annotation.services.releases import release_freeze
from annotation.services.reliability import reliability_fit
from annotation.services.review import review_submit
from portal.models import TrainingLevel
from tests.browser.layout import assert_page_fits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = ((1280, 900), (390, 844))


def _vetted(make_user):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    sources_import(paths=[ROOT / "fixtures" / "demo-sources.csv"])
    config = VettingConfig.load()
    config.second_share, config.gold_rate = 1.0, 0.0
    config.save()
    steady, slipping = make_user("reviewer"), make_user("reviewer")
    steady.first_name, steady.last_name, steady.training_level = "Ada", "Steady", TrainingLevel.RESIDENT
    slipping.first_name, slipping.last_name, slipping.training_level = "Ben", "Slipping", TrainingLevel.STUDENT_3
    steady.save()
    slipping.save()
    given = {steady.pk: 0, slipping.pk: 0}
    for turn in range(70):
        reviewer = (steady, slipping)[turn % 2]
        lease = assignment_next(reviewer=reviewer)
        if lease is None:
            continue
        given[reviewer.pk] += 1
        verdict = "incorrect" if reviewer == slipping and given[reviewer.pk] > 24 else "correct"
        review_submit(assignment_id=lease.pk, reviewer=reviewer, idempotency_key=lease.idempotency_key,
                      verdict=verdict, relevance=5 if verdict == "correct" else 2, comment="")  # fmt: skip
    adjudicator = make_user("adjudicator")
    for item in QAItem.objects.filter(status="in_adjudication"):
        item_adjudicate(item=item, adjudicator=adjudicator, verdict="correct", relevance=5, reason="As the source.")
    return steady, slipping


@override_settings(RELIABILITY_WINDOW=5)
def test_reliability_drift_prompt_and_release_card_in_the_browser(open_page, organizer, make_user):
    steady, slipping = _vetted(make_user)
    fit = reliability_fit()
    assert fit is not None
    release = release_freeze(name="Card demo")

    for width, height in WIDTHS:
        page = open_page(organizer, viewport={"width": width, "height": height})
        page.goto("/organize/vetting/reliability/")
        main = page.inner_text("main")
        assert "Recalibration suggested" in main and "Ben Slipping" in main
        assert main.index("Medical student, year 3") < main.index("Resident")  # the levels in their order
        assert "Calls a wrong item correct" in main or "CALLS A WRONG ITEM CORRECT" in main.upper()
        assert_page_fits(page, width, "reliability")
        page.goto(f"/releases/{release.label}/")
        card = page.inner_text("#release-card")
        assert "Estimated wrong items" in card
        assert_page_fits(page, width, "release-card")

        reviewer_page = open_page(slipping, viewport={"width": width, "height": height})
        reviewer_page.goto("/")
        assert reviewer_page.locator("#recalibrate").is_visible()
        assert "read the guidelines again" in reviewer_page.inner_text("#recalibrate")
        assert_page_fits(reviewer_page, width, "recalibrate")
        steady_page = open_page(steady, viewport={"width": width, "height": height})
        steady_page.goto("/")
        assert steady_page.locator("#recalibrate").count() == 0
