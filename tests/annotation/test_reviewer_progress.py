"""A reviewer's own counts and pace: totals, last 24 h / 7 days, median seconds, own disputes (gold included)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import GoldAnswer, Review
from annotation.selectors.review import reviewer_progress
from annotation.services.disputes import dispute_file, dispute_reject
from annotation.services.gold import gold_mark
from annotation.services.queue import assignment_next

pytestmark = pytest.mark.django_db


def test_counts_windows_pace_and_disputes(sample_items, config, organizer, make_user, review):
    alice, someone_else = make_user("reviewer"), make_user("reviewer")
    # Gold first: the queue order is seeded per reviewer, so any item may be among alice's first three.
    gold_mark(item=sample_items[-1], expected_verdict="correct", by=organizer)
    for _ in range(3):
        review(assignment_next(reviewer=alice))
    review(assignment_next(reviewer=someone_else))  # not alice's: never counted
    config.gold_rate = 1.0
    config.save()
    review(assignment_next(reviewer=alice, gold_draw=0.0))  # a gold answer counts as an ordinary item to her
    config.gold_rate = 0.0
    config.save()
    mine = list(Review.objects.filter(reviewer=alice).order_by("pk"))
    now = timezone.now()
    Review.objects.filter(pk=mine[0].pk).update(created_at=now - timedelta(days=2), server_seconds=10)
    Review.objects.filter(pk=mine[1].pk).update(created_at=now - timedelta(days=8), server_seconds=20)
    Review.objects.filter(pk=mine[2].pk).update(server_seconds=40)
    GoldAnswer.objects.filter(reviewer=alice).update(server_seconds=30)
    for verdict in ("open", "rejected"):
        lease = assignment_next(reviewer=alice)
        dispute = dispute_file(
            raised_by=alice, assignment_id=lease.pk, idempotency_key=lease.idempotency_key,
            category="factual_error", text="Contradicts the excerpt.",
        )  # fmt: skip
        if verdict == "rejected":
            dispute_reject(dispute=dispute, resolver=organizer, note="The excerpt supports it.")

    progress = reviewer_progress(alice)

    assert progress == {
        "total": 4,  # three reviews + one gold answer
        "last_24h": 2,  # the review from 2 days ago and the one from 8 days ago are out
        "last_7d": 3,
        "median_seconds": 25.0,  # median of 10, 20, 40 and 30
        "disputes_open": 1,
        "disputes_resolved": 1,
    }


def test_a_newcomer_has_zero_counts_and_no_pace(make_user):
    assert reviewer_progress(make_user("reviewer")) == {
        "total": 0, "last_24h": 0, "last_7d": 0, "median_seconds": None, "disputes_open": 0, "disputes_resolved": 0,
    }  # fmt: skip
