"""The review queue: one item per "next", leases, no repeats, pause / priority / type filters, expiry."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, ImportBatch, QAItem
from annotation.services.queue import assignment_next, assignments_expire
from annotation.workflow import ItemStatus, Stage, queue_order

pytestmark = pytest.mark.django_db


def test_next_hands_out_one_item_and_marks_it_in_review(sample_items, config, reviewer):
    assignment = assignment_next(reviewer=reviewer)
    assert assignment.stage == Stage.PRIMARY
    first = queue_order([i.uid for i in sample_items], seed=config.seed, reviewer_id=reviewer.pk)[0]
    assert assignment.item.uid == first
    assert QAItem.objects.get(pk=assignment.item.pk).status == ItemStatus.IN_REVIEW
    assert Assignment.objects.count() == 1


def test_reviewer_holding_a_lease_gets_the_same_item_back(sample_items, config, reviewer):
    first = assignment_next(reviewer=reviewer)
    again = assignment_next(reviewer=reviewer)
    assert again.pk == first.pk and Assignment.objects.count() == 1


def test_two_reviewers_get_different_items(sample_items, config, make_user):
    a = assignment_next(reviewer=make_user("reviewer"))
    b = assignment_next(reviewer=make_user("reviewer"))
    assert a.item_id != b.item_id


def test_queue_refuses_people_without_the_reviewer_role(sample_items, config, organizer):
    from portal.errors import NotAllowed

    with pytest.raises(NotAllowed):
        assignment_next(reviewer=organizer)


def test_paused_batches_are_skipped_and_higher_priority_comes_first(sample_items, config, make_user):
    from annotation.services.imports import items_import
    from tests.annotation.conftest import ROOT

    first_batch = ImportBatch.objects.get()
    items_import(paths=[ROOT / "fixtures" / "promptcblue-sample.jsonl"], fmt="promptcblue")
    second_batch = ImportBatch.objects.exclude(pk=first_batch.pk).get()
    second_batch.priority = 5
    second_batch.save()
    assert assignment_next(reviewer=make_user("reviewer")).item.batch_id == second_batch.pk
    second_batch.paused = True
    second_batch.save()
    assert assignment_next(reviewer=make_user("reviewer")).item.batch_id == first_batch.pk
    first_batch.paused = True
    first_batch.save()
    assert assignment_next(reviewer=make_user("reviewer")) is None


def test_queue_filters_by_qa_type(sample_items, config, reviewer):
    assignment = assignment_next(reviewer=reviewer, qa_type="multi_hop")
    assert assignment.item.qa_type == "multi_hop"


def test_expired_lease_returns_the_item_to_the_queue_for_someone_else(sample_items, config, make_user):
    alice, bob = make_user("reviewer"), make_user("reviewer")
    first = assignment_next(reviewer=alice, qa_type="true_false")
    # Only the expired item is left of its type: Bob (who starts elsewhere in the random order) gets it.
    QAItem.objects.filter(qa_type="true_false").exclude(pk=first.item_id).update(status=ItemStatus.VERIFIED)
    later = timezone.now() + timedelta(seconds=1801)
    taken = assignment_next(reviewer=bob, qa_type="true_false", now=later)
    assert taken.item_id == first.item_id
    first.refresh_from_db()
    assert first.status == Assignment.Status.RELEASED


def test_expired_lease_is_not_handed_back_to_its_holder(sample_items, config, reviewer):
    first = assignment_next(reviewer=reviewer, qa_type="true_false")
    later = timezone.now() + timedelta(seconds=1801)
    second = assignment_next(reviewer=reviewer, qa_type="true_false", now=later)
    assert second.item_id != first.item_id


def test_sweeper_puts_abandoned_items_back_to_imported(sample_items, config, reviewer):
    first = assignment_next(reviewer=reviewer)
    assert assignments_expire(now=timezone.now() + timedelta(hours=1)) == 1
    assert QAItem.objects.get(pk=first.item_id).status == ItemStatus.IMPORTED


def test_a_reviewer_never_gets_the_same_item_twice(sample_items, config, reviewer, review):
    seen = set()
    while (assignment := assignment_next(reviewer=reviewer)) is not None:
        assert assignment.item_id not in seen
        seen.add(assignment.item_id)
        review(assignment, "correct", 5)
    assert len(seen) == len(sample_items)


def test_secondary_review_goes_to_someone_other_than_the_primary(sample_items, config, make_user, review):
    config.second_share = 1.0
    config.save()
    alice, bob = make_user("reviewer"), make_user("reviewer")
    primary = assignment_next(reviewer=alice)
    review(primary, "correct", 5)
    assert QAItem.objects.get(pk=primary.item_id).status == ItemStatus.IN_SECOND_REVIEW
    nxt = assignment_next(reviewer=alice)
    assert nxt.item_id != primary.item_id  # alice cannot second-review her own item
    second = assignment_next(reviewer=bob)
    assert second.item_id == primary.item_id and second.stage == Stage.SECONDARY
    carol = make_user("reviewer")
    assert assignment_next(reviewer=carol).item_id not in (primary.item_id,)  # one secondary reviewer only


def test_expired_secondary_lease_is_taken_over_and_ended(sample_items, config, make_user, review):
    config.second_share = 1.0
    config.save()
    alice, bob, carol = make_user("reviewer"), make_user("reviewer"), make_user("reviewer")
    review(assignment_next(reviewer=alice, qa_type="true_false"), "correct", 5)
    abandoned = assignment_next(reviewer=bob, qa_type="true_false")
    assert abandoned.stage == Stage.SECONDARY
    later = timezone.now() + timedelta(seconds=1801)
    taken = assignment_next(reviewer=carol, qa_type="true_false", now=later)
    assert (taken.item_id, taken.stage) == (abandoned.item_id, Stage.SECONDARY)
    abandoned.refresh_from_db()
    assert abandoned.status == Assignment.Status.RELEASED and abandoned.finished_at == later
    live = Assignment.objects.filter(item_id=taken.item_id, stage=Stage.SECONDARY, status=Assignment.Status.ACTIVE)
    assert list(live) == [taken]


def test_live_secondary_lease_is_not_taken_over(sample_items, config, make_user, review):
    config.second_share = 1.0
    config.save()
    alice, bob, carol = make_user("reviewer"), make_user("reviewer"), make_user("reviewer")
    first = assignment_next(reviewer=alice, qa_type="true_false")
    review(first, "correct", 5)
    assert assignment_next(reviewer=bob, qa_type="true_false").item_id == first.item_id
    other = assignment_next(reviewer=carol, qa_type="true_false")
    assert other is None or other.item_id != first.item_id


def test_next_brings_the_source_excerpt_without_another_query(
    sample_items, config, make_user, django_assert_num_queries
):
    assignment = assignment_next(reviewer=make_user("reviewer"))
    while assignment.item.passage_id is None:  # the seeded queue may start at an item without an excerpt
        assignment = assignment_next(reviewer=make_user("reviewer"))
    expected = QAItem.objects.select_related("passage").get(pk=assignment.item_id).passage
    assert expected is not None
    with django_assert_num_queries(0):
        assert assignment.item.passage.text == expected.text
        assert assignment.item.passage.pk == expected.pk


def test_inside_a_callers_transaction_next_leaves_the_commit_mode_alone(sample_items, config, reviewer):
    """ "next" commits its lease without waiting for the WAL flush only when the transaction is its own (see the
    concurrency module for that case): inside a caller's transaction, which may hold a judgement, nothing changes."""
    from django.db import connection, transaction

    with transaction.atomic():
        assignment_next(reviewer=reviewer)
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "on"


def _served_order(reviewer, review) -> list[str]:
    order = []
    while (assignment := assignment_next(reviewer=reviewer)) is not None:
        order.append(assignment.item.uid)
        review(assignment, "correct", 5)
    return order


def test_items_come_in_the_seeded_random_order_of_each_reviewer(sample_items, config, make_user, review):
    config.second_share = 0.0  # every item is final after one review: each person walks the whole queue alone
    config.save()
    uids = [i.uid for i in sample_items]
    alice = make_user("reviewer")
    served = _served_order(alice, review)
    assert served == queue_order(uids, seed=config.seed, reviewer_id=alice.pk)
    assert served != uids  # not import order


def test_the_order_is_reproducible_and_differs_between_reviewers_and_seeds():
    uids = [f"item-{n}" for n in range(200)]
    assert queue_order(uids, seed="s", reviewer_id=7) == queue_order(uids, seed="s", reviewer_id=7)
    assert queue_order(uids, seed="s", reviewer_id=7) != queue_order(uids, seed="s", reviewer_id=8)
    assert queue_order(uids, seed="s", reviewer_id=7) != queue_order(uids, seed="t", reviewer_id=7)
    assert sorted(queue_order(uids, seed="s", reviewer_id=7)) == sorted(uids)


def test_two_reviewers_start_at_their_own_places_in_the_order(sample_items, config, make_user):
    uids = [i.uid for i in sample_items]
    people = [make_user("reviewer") for _ in range(3)]
    firsts = []
    for person in people:
        assignment = assignment_next(reviewer=person)
        expected = [u for u in queue_order(uids, seed=config.seed, reviewer_id=person.pk) if u not in firsts][0]
        assert assignment.item.uid == expected
        firsts.append(assignment.item.uid)


def test_the_database_computes_the_same_queue_key_as_the_reference(sample_items):
    from annotation.workflow import queue_key

    assert all(item.queue_key == queue_key(item.uid) for item in QAItem.objects.all())
