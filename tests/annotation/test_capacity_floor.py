"""The capacity bench's hand-written floor (bench/_floor_urls.py) writes what a primary review writes.

``bench_capacity.py --floor`` reports it as a lower bound on what a rewrite of the lease and the submit could cost;
that figure means something only if its two statements store the same rows as the portal's own path. Checked here
against ``assignment_next`` + ``review_submit`` (the ``review`` fixture) on the same data: a primary review not drawn
for second review.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from annotation.models import Assignment, QAItem, Review
from annotation.services.queue import assignment_next
from portal.models import AuditEntry

pytestmark = pytest.mark.django_db

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _floor_urls import LEASE, SUBMIT, lease_parameters  # noqa: E402


def _written(assignment_id: int) -> dict:
    """The rows one review left: its lease, the review, the item's final state, and the audit trail of both."""
    assignment = Assignment.objects.get(pk=assignment_id)
    review = Review.objects.get(assignment=assignment)
    item = QAItem.objects.get(pk=assignment.item_id)
    trail = AuditEntry.objects.filter(
        Q(object_type="annotation.qaitem", object_id=str(item.pk))
        | Q(object_type="annotation.review", object_id=str(review.pk))
    )
    return {
        "lease": (assignment.stage, assignment.status, assignment.guideline_id is not None, assignment.finished_at is not None,
                  round((assignment.expires_at - assignment.created_at).total_seconds())),
        "review": (review.stage, review.verdict, review.relevance, review.comment, review.reviewer_id, review.active_seconds),
        "item": (item.status, item.final_verdict, item.final_relevance, item.final_source, item.second_review,
                 item.finalized_at is not None),
        "audit": sorted(trail.values_list("action", flat=True)),
    }  # fmt: skip


def test_the_floor_stores_the_rows_of_a_primary_review(sample_items, config, make_user, review):
    from annotation.services.guidelines import guideline_version_create

    config.second_share = 0.0  # no second review: the floor settles every item after its primary review
    config.save()
    qa_type = sample_items[0].qa_type
    guideline_version_create(
        benchmark="cliniqlink", qa_type=qa_type, text="Read it all.", author=make_user("organizer")
    )
    first, second = make_user("reviewer"), make_user("reviewer")
    QAItem.objects.exclude(qa_type=qa_type).update(status="held")  # both take the guideline's type

    assignment = assignment_next(reviewer=first)
    review(assignment, "correct", 4, comment="bench", active_seconds=10)
    with connection.cursor() as cursor:
        cursor.execute(LEASE, lease_parameters(second.pk, start=0))
        leased = cursor.fetchone()
        cursor.execute(
            SUBMIT,
            {
                "reviewer": second.pk,
                "now": timezone.now(),
                "verdict": "correct",
                "relevance": 4,
                "comment": "bench",
                "active": 10.0,
            },
        )
        assert cursor.fetchone() is not None

    assert leased[1] and leased[5] and leased[9] == "Read it all."  # key, question, guideline text
    portal, floor = _written(assignment.pk), _written(leased[0])
    assert floor["review"][-2:] == (second.pk, 10.0)
    assert {**portal, "review": portal["review"][:4]} == {**floor, "review": floor["review"][:4]}
    assert portal["audit"] == ["item_assign", "item_route_verify", "item_submit_primary", "review_created"]
