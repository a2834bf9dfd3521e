"""Queue invariants under real concurrency: threads with their own PostgreSQL connections ask at once."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from functools import partial

import pytest
from django.db import connection
from django.utils import timezone

from annotation.models import Assignment, QAItem
from annotation.services.queue import assignment_next
from annotation.workflow import ItemStatus, Stage
from tests.concurrency import at_once

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _all_at_once(people, **kwargs) -> list:
    """Every person presses "next" at the same moment, each thread on its own database connection."""
    results = at_once(*(partial(assignment_next, reviewer=person, **kwargs) for person in people))
    errors = [r for r in results if isinstance(r, Exception)]
    assert not errors, errors
    return results


def _live_per_item_and_stage():
    live = Assignment.objects.filter(status=Assignment.Status.ACTIVE, expires_at__gt=timezone.now())
    return Counter(live.values_list("item_id", "stage"))


def test_fifty_reviewers_at_once_never_share_an_item(sample_items, config, make_user):
    people = [make_user("reviewer") for _ in range(50)]
    results = _all_at_once(people)
    given = [a.item_id for a in results if a is not None]
    assert len(given) == len(sample_items)  # 35 items for 50 people: every item handed out once, 15 get none
    assert len(set(given)) == len(given)
    assert max(_live_per_item_and_stage().values()) == 1
    assert QAItem.objects.filter(status=ItemStatus.IN_REVIEW).count() == len(sample_items)


def test_one_reviewer_double_clicking_gets_one_lease(sample_items, config, make_user):
    person = make_user("reviewer")
    results = _all_at_once([person] * 10)
    assert len({a.pk for a in results}) == 1
    assert Assignment.objects.filter(reviewer=person).count() == 1


def test_concurrent_secondary_requests_respect_the_overlap_of_one(sample_items, config, make_user, review):
    config.second_share = 1.0
    config.save()
    primary = make_user("reviewer")
    while (a := assignment_next(reviewer=primary)) is not None:
        review(a, "correct", 4)
    assert QAItem.objects.filter(status=ItemStatus.IN_SECOND_REVIEW).count() == len(sample_items)
    results = _all_at_once([make_user("reviewer") for _ in range(40)])
    given = [a for a in results if a is not None]
    assert len(given) == len(sample_items)
    assert all(a.stage == Stage.SECONDARY and a.reviewer_id != primary.pk for a in given)
    assert len({a.item_id for a in given}) == len(given)


def test_expired_leases_return_once_each_under_concurrency(sample_items, config, make_user):
    first = [make_user("reviewer") for _ in range(len(sample_items))]
    for person in first:
        assignment_next(reviewer=person)
    later = timezone.now() + timedelta(hours=1)
    results = _all_at_once([make_user("reviewer") for _ in range(45)], now=later)
    given = [a.item_id for a in results if a is not None]
    assert len(given) == len(set(given)) == len(sample_items)
    live = Assignment.objects.filter(status=Assignment.Status.ACTIVE, expires_at__gt=later)
    assert max(Counter(live.values_list("item_id", flat=True)).values()) == 1


def test_a_lease_in_its_own_transaction_does_not_wait_for_the_disk_flush(sample_items, config, make_user):
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        assignment_next(reviewer=make_user("reviewer"))
    first = next(q["sql"] for q in queries.captured_queries if "set_config('synchronous_commit'" in q["sql"])
    assert "CASE WHEN true THEN 'off'" in first
