"""An adjudicator decides a disagreement in real Chromium with the keyboard only and lands on the next item; on a
disputed item the dispute's outcome follows the verdict, or the adjudicator says which (p / r)."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import QAItem, VettingConfig
from annotation.services.disputes import dispute_file
from annotation.services.imports import items_import, sources_import
from annotation.services.queue import assignment_next
from annotation.services.review import review_submit
from tests.browser.layout import assert_page_fits

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
        cannot_tell_reason="excerpt" if verdict == "cannot_tell" else "",
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


@pytest.fixture
def two_disputes(make_user):
    """Two items held by a reviewer's dispute (a factual error each), in the adjudication queue's order."""
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    sources_import(paths=[ROOT / "fixtures" / "demo-sources.csv"])
    config = VettingConfig.load()
    config.second_share, config.gold_rate = 0.0, 0.0
    config.save()
    reviewer = make_user("reviewer")
    disputes = []
    for _ in range(2):
        lease = assignment_next(reviewer=reviewer)
        disputes.append(
            dispute_file(
                raised_by=reviewer,
                assignment_id=lease.pk,
                idempotency_key=lease.idempotency_key,
                category="factual_error",
                text="The expected answer is wrong.",
            )
        )
    return sorted(disputes, key=lambda d: d.item_id)


@pytest.mark.parametrize("width", [1300, 390])
def test_the_dispute_outcome_follows_the_verdict_by_keyboard(page, login, make_user, two_disputes, width):
    """F1: c 5 e … Enter on a disputed item records the dispute rejected (Correct: the item stands); a verdict that
    does not settle it asks for p / r, and nothing is recorded until the adjudicator says which."""
    accepted, unclear = two_disputes
    page.set_viewport_size({"width": width, "height": 900})
    page.set_default_navigation_timeout(30_000)
    login(make_user("adjudicator"))

    page.goto(f"/disputes/{accepted.pk}/")
    rule = page.locator("#outcome-rule").inner_text()
    assert (
        "Correct: rejected" in rule and "Incorrect: upheld" in rule and "Cannot tell from the source: you say" in rule
    )
    assert page.locator("#decide-link").inner_text() == "Decide the item"
    assert_page_fits(page, width, "dispute-outcome-rule")
    with page.expect_navigation():
        page.locator("#decide-link").click()

    row = page.locator(f"#dispute-outcome-{accepted.pk}")
    upheld, rejected = page.locator(f"#dispute-{accepted.pk}-upheld"), page.locator(f"#dispute-{accepted.pk}-rejected")
    assert not upheld.is_checked() and not rejected.is_checked()  # nothing preselected before the verdict
    assert "p" in page.locator("#shortcuts").inner_text()
    page.keyboard.press("p")  # no verdict yet: the verdict comes first
    assert "Choose the verdict first" in row.locator(".outcome-now").inner_text()
    assert not upheld.is_checked()
    page.keyboard.press("c")
    assert rejected.is_checked() and upheld.is_disabled()
    assert row.locator(".outcome-now").inner_text() == "Rejected: the verdict settles it."
    page.keyboard.press("5")
    page.keyboard.press("e")
    page.keyboard.type("The excerpt gives exactly this answer.")
    page.keyboard.press("Escape")
    assert_page_fits(page, width, "adjudication-dispute-settled")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert f"/adjudicate/{unclear.item.uid}/" in page.url  # the next item opened (the #final-judgement kept)
    accepted.refresh_from_db()
    assert accepted.status == "rejected" and accepted.item.status == "verified"

    # Cannot tell does not settle a factual-error dispute: Enter is held until p / r says which.
    row = page.locator(f"#dispute-outcome-{unclear.pk}")
    page.keyboard.press("u")
    page.keyboard.press("3")
    page.keyboard.press("e")
    page.keyboard.type("The excerpt stops before the answer.")
    page.keyboard.press("Escape")
    assert "does not settle it" in row.locator(".outcome-now").inner_text()
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    assert f"/adjudicate/{unclear.item.uid}/" in page.url
    unclear.refresh_from_db()
    assert unclear.status == "open"
    page.keyboard.press("p")
    assert page.locator(f"#dispute-{unclear.pk}-upheld").is_checked()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    unclear.refresh_from_db()
    assert unclear.status == "upheld"

    # The dispute page says so too.
    page.goto(f"/disputes/{accepted.pk}/")
    assert "Rejected by" in page.locator("#dispute").inner_text()
