"""Gold items: mixed in like any item, scored for accuracy, never counted as reviews of real items."""

from __future__ import annotations

import pytest

from annotation.models import GoldAnswer, QAItem, Review
from annotation.selectors.vetting import reviewer_quality, vetting_progress
from annotation.services.gold import gold_mark
from annotation.services.queue import assignment_next
from annotation.services.release_rules import SelectionRule
from annotation.workflow import ItemStatus, Stage
from portal.errors import Conflict

pytestmark = pytest.mark.django_db


def test_gold_answers_are_scored_and_never_count_as_reviews(sample_items, config, organizer, make_user, review):
    gold = gold_mark(item=sample_items[0], expected_verdict="incorrect", planted_error=True, by=organizer)
    alice = make_user("reviewer", email="alice@test.portal")
    config.gold_rate = 0.5
    config.save()
    assignment = assignment_next(reviewer=alice, gold_draw=0.0)
    assert assignment.item_id == gold.item_id and assignment.stage == Stage.GOLD
    answer = review(assignment, "correct", 5)
    assert isinstance(answer, GoldAnswer) and answer.is_correct is False
    assert not Review.objects.filter(item=gold.item).exists()
    item = QAItem.objects.get(pk=gold.item_id)
    assert item.status == ItemStatus.IMPORTED and item.final_verdict == ""
    assert item not in SelectionRule().queryset()
    row = next(r for r in reviewer_quality() if r["email"] == "alice@test.portal")
    assert row["gold_answers"] == 1 and row["gold_accuracy"] == 0.0 and row["reviews"] == 0
    assert row["name"] == "alice@test.portal"  # no name given: the address stands in
    alice.first_name, alice.last_name = "Alice", "Moreau"
    alice.save()
    assert next(r for r in reviewer_quality() if r["email"] == "alice@test.portal")["name"] == "Alice Moreau"
    assert vetting_progress()["stages"]["primary_reviews"] == 0


def test_gold_items_are_never_handed_out_as_ordinary_items(sample_items, config, organizer, reviewer, review):
    gold = gold_mark(item=sample_items[0], expected_verdict="correct", by=organizer)
    seen = []
    while (a := assignment_next(reviewer=reviewer, gold_draw=0.99)) is not None:
        seen.append(a.item_id)
        review(a, "correct", 5)
    assert gold.item_id not in seen and len(seen) == len(sample_items) - 1


def test_reviewers_below_the_gold_threshold_are_flagged(sample_items, config, organizer, make_user, review):
    config.gold_rate, config.gold_min_answers, config.gold_min_accuracy = 1.0, 2, 0.8
    config.save()
    for item in sample_items[:3]:
        gold_mark(item=item, expected_verdict="correct", by=organizer)
    good, bad = make_user("reviewer", email="good@test.portal"), make_user("reviewer", email="bad@test.portal")
    for _ in range(3):
        review(assignment_next(reviewer=good), "correct", 5)
        review(assignment_next(reviewer=bad), "incorrect", 5)
    rows = {r["email"]: r for r in reviewer_quality()}
    assert rows["good@test.portal"]["flagged"] is False and rows["good@test.portal"]["gold_accuracy"] == 1.0
    assert rows["bad@test.portal"]["flagged"] is True


def test_a_reviewed_item_cannot_become_gold(sample_items, config, organizer, reviewer, review):
    assignment = assignment_next(reviewer=reviewer)
    review(assignment, "correct", 5)
    with pytest.raises(Conflict):
        gold_mark(item=assignment.item, expected_verdict="correct", by=organizer)


def test_pausing_every_batch_stops_gold_items_too(sample_items, config, organizer, reviewer):
    """With every batch paused the queue is empty: handing out only gold items would tell them apart."""
    from annotation.models import ImportBatch

    gold_mark(item=sample_items[0], expected_verdict="correct", by=organizer)
    config.gold_rate = 1.0
    config.save()
    ImportBatch.objects.update(paused=True)
    assert assignment_next(reviewer=reviewer, gold_draw=0.0) is None
    ImportBatch.objects.update(paused=False)
    assert assignment_next(reviewer=reviewer, gold_draw=0.0).stage == Stage.GOLD
