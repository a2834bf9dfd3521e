"""An adjudicator decides a disagreement in real Chromium with the keyboard only and lands on the next item."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import QAItem, VettingConfig
from annotation.services.imports import items_import, sources_import
from annotation.services.queue import assignment_next
from annotation.services.review import review_submit

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _review(lease, verdict, relevance, comment=""):
    review_submit(
        assignment_id=lease.pk,
        reviewer=lease.reviewer,
        idempotency_key=lease.idempotency_key,
        verdict=verdict,
        relevance=relevance,
        comment=comment,
    )


@pytest.fixture
def two_disagreements(make_user):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    sources_import(paths=[ROOT / "fixtures" / "demo-sources.csv"])
    config = VettingConfig.load()
    config.second_share, config.gold_rate, config.relevance_gap = 1.0, 0.0, 2
    config.save()
    first, second = make_user("reviewer"), make_user("reviewer")
    item_ids = []
    for verdicts in (("correct", "incorrect"), ("correct", "cannot_tell")):
        lease = assignment_next(reviewer=first)
        _review(lease, verdicts[0], 5, "Matches the excerpt.")
        _review(assignment_next(reviewer=second), verdicts[1], 5, "Not what the source says.")
        item_ids.append(lease.item_id)
    # In the adjudication queue's order (batch priority, then item id), not the order the reviewers met them in: the
    # review queue's order is seeded per reviewer.
    return list(QAItem.objects.filter(pk__in=item_ids).order_by("id").values_list("uid", flat=True))


def test_adjudicator_decides_by_keyboard_and_the_next_item_opens(page, login, make_user, two_disagreements):
    first_uid, second_uid = two_disagreements
    page.set_default_navigation_timeout(30_000)  # the live server's first request is slow on a busy machine
    login(make_user("adjudicator"))
    page.goto("/adjudicate/")
    assert page.locator("#shortcuts").is_visible()
    page.keyboard.press("j")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url.endswith(f"/adjudicate/{first_uid}/")

    verdict_row = page.locator("#review-comparison tr[data-field=verdict]")
    assert "differs" in (verdict_row.get_attribute("class") or "")
    assert verdict_row.locator(".differs-label").inner_text().strip().lower() == "differs"
    relevance_row = page.locator("#review-comparison tr[data-field=relevance]")
    assert relevance_row.locator(".differs-label").count() == 0  # both rated 5
    assert "First review" in page.locator("#history").inner_text()

    page.keyboard.press("i")
    page.keyboard.press("4")
    page.keyboard.press("e")
    page.keyboard.type("The excerpt gives another dose.")
    page.keyboard.press("Escape")
    with page.expect_navigation():
        page.keyboard.press("Enter")

    assert page.url.endswith(f"/adjudicate/{second_uid}/")
    assert f"Decided {first_uid} – next item." in page.locator(".messages").inner_text()
    decided = QAItem.objects.get(uid=first_uid)
    assert (decided.status, decided.final_verdict, decided.final_relevance) == ("rejected", "incorrect", 4.0)
    assert decided.adjudications.get().reason == "The excerpt gives another dose."

    # k goes back through the queue: the decided item is gone, so the only item left stays put
    assert page.locator("#previous-item").count() == 0


def test_a_half_written_judgement_survives_a_reload(page, login, make_user, two_disagreements):
    page.set_default_navigation_timeout(30_000)
    login(make_user("adjudicator"))
    page.goto(f"/adjudicate/{two_disagreements[0]}/")
    page.keyboard.press("u")
    page.keyboard.press("2")
    page.keyboard.press("e")
    page.keyboard.type("checking the textbook")
    page.reload()
    assert page.locator("#verdict-cannot_tell").is_checked() and page.locator("#relevance-2").is_checked()
    assert page.locator("#id_reason").input_value() == "checking the textbook"
    page.keyboard.press("j")  # next item: its own, empty form
    page.wait_for_url(f"**/adjudicate/{two_disagreements[1]}/")
    assert page.locator("#id_reason").input_value() == ""
