"""The review loop's hot path written without the ORM's compiler and DRF's field copies: the same rows, the same
bodies.

The serializers the review API answers with write their representation out by hand (``to_representation``); their
declared fields stay the API's schema. These tests hold the two to the same output for every kind of item, and
``annotation.services.transitions.item_lock`` and the row helpers of ``portal.bulk`` (tests/portal/test_bulk.py) to
what the ORM reads and writes on this path.
"""

from __future__ import annotations

import pytest
from rest_framework import serializers

from annotation.models import Assignment, GoldItem, QAItem, Review, ReviewDraft
from annotation.serializers.review import (
    AssignmentSerializer,
    GuidelineSerializer,
    OwnReviewSerializer,
    ReviewItemSerializer,
)
from annotation.services.guidelines import guideline_version_create
from annotation.services.queue import assignment_next
from annotation.services.transitions import item_lock
from annotation.workflow import ItemStatus
from portal.bulk import delete_where, update_row


def _declared(serializer_class, instance) -> dict:
    """What DRF's own field-by-field representation gives for ``instance`` (the declared fields, the schema)."""
    return dict(serializers.Serializer.to_representation(serializer_class(), instance))


def test_every_lease_is_answered_as_its_declared_fields_would_answer_it(sample_items, config, make_user, organizer):
    # A new version for one type, with markup in it; the lease of the last item is shown without a guideline, as
    # a lease of a type nobody wrote one for is.
    guideline_version_create(
        benchmark="cliniqlink", qa_type="true_false", text="**Read** the <b>passage</b>.", author=organizer
    )
    types, with_passage, with_guideline = set(), set(), set()
    for n, _ in enumerate(sample_items):
        lease = assignment_next(reviewer=make_user("reviewer"))
        assert lease is not None
        if n == len(sample_items) - 1:
            lease.guideline = None
        written = AssignmentSerializer(lease).data
        assert written == _declared(AssignmentSerializer, lease)
        assert written["item"] == _declared(ReviewItemSerializer, lease.item)
        assert list(written["item"]) == list(ReviewItemSerializer._declared_fields)
        if lease.guideline is not None:
            assert written["guideline"] == _declared(GuidelineSerializer, lease.guideline)
            with_guideline.add(True)
        else:
            assert written["guideline"] is None
            with_guideline.add(False)
        types.add(lease.item.qa_type)
        with_passage.add(written["item"]["passage_text"] is not None)
    assert len(types) == 7 and with_passage == {True, False} and with_guideline == {True, False}


def test_a_stored_review_and_a_gold_answer_are_answered_as_their_declared_fields_would(
    sample_items, config, reviewer, review
):
    GoldItem.objects.create(item=sample_items[-1], expected_verdict="correct")
    stored = review(assignment_next(reviewer=reviewer), "incorrect", 2, comment="  dose <wrong> ")
    assert OwnReviewSerializer(stored).data == _declared(OwnReviewSerializer, stored)
    config.gold_rate = 1.0
    config.save()
    gold_lease = assignment_next(reviewer=reviewer, gold_draw=0.0)
    assert gold_lease.stage == "gold"
    answer = review(gold_lease, "correct", 4)
    assert OwnReviewSerializer(answer).data == _declared(OwnReviewSerializer, answer)


def test_item_lock_reads_each_lock_field_into_its_own_attribute(sample_items):
    """Model.from_db places a partial row's values by the model's field order; a row read in another order would
    put one column's value into another attribute (a held item's ``held_from`` read as its ``final_source``)."""
    item = sample_items[0]
    QAItem.objects.filter(pk=item.pk).update(
        status=ItemStatus.HELD,
        held_from=ItemStatus.VERIFIED,
        final_verdict="incorrect",
        final_relevance=3,
        final_source="primary",
    )
    locked = item_lock(item.pk)
    assert (locked.pk, locked.uid, locked.status, locked.held_from) == (
        item.pk,
        item.uid,
        ItemStatus.HELD,
        ItemStatus.VERIFIED,
    )
    assert (locked.final_verdict, locked.final_relevance, locked.final_source) == ("incorrect", 3, "primary")
    with pytest.raises(QAItem.DoesNotExist):
        item_lock(10**9)


def test_update_row_and_delete_where_write_what_the_orm_writes(sample_items, config, reviewer, make_user):
    lease = assignment_next(reviewer=reviewer)
    other = assignment_next(reviewer=make_user("reviewer"))
    update_row(Assignment, lease.pk, {"status": "submitted", "finished_at": lease.expires_at})
    Assignment.objects.filter(pk=other.pk).update(status="submitted", finished_at=other.expires_at)
    mine, orms = Assignment.objects.get(pk=lease.pk), Assignment.objects.get(pk=other.pk)
    assert (mine.status, mine.finished_at) == ("submitted", lease.expires_at)
    assert (orms.status, orms.finished_at) == ("submitted", other.expires_at)
    ReviewDraft.objects.create(reviewer=reviewer, item_id=lease.item_id, data={})
    ReviewDraft.objects.create(reviewer=reviewer, item_id=other.item_id, data={})
    delete_where(ReviewDraft, reviewer_id=reviewer.pk, item_id=lease.item_id)
    assert list(ReviewDraft.objects.values_list("item_id", flat=True)) == [other.item_id]


def test_a_review_through_the_api_takes_eleven_round_trips(sample_items, config, reviewer):
    """The review loop's cost is mostly per statement (docs/benchmarks.md, capacity): "next" takes six round trips
    (token, begin, own leases, candidate, the lease's writes, commit), "submit" five (token, begin, the reads, the
    writes, commit); inside the test's transaction the begin and commit are a savepoint's. A new statement on this
    path shows up here first."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    from portal.api_tokens import api_token_create

    config.second_share = 0.0
    config.save()
    _, key = api_token_create(user=reviewer, name="loop", mfa_verified=False)
    client = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
    with CaptureQueriesContext(connection) as next_queries:
        lease = client.post("/api/review/next/", {}, format="json").json()
    body = {"idempotency_key": lease["idempotency_key"], "verdict": "correct", "relevance": 4}
    with CaptureQueriesContext(connection) as submit_queries:
        response = client.post(f"/api/review/assignments/{lease['id']}/review/", body, format="json")
    assert response.status_code == 201
    assert (len(next_queries), len(submit_queries)) == (6, 5), [q["sql"][:60] for q in next_queries]
    stored = Review.objects.get(assignment_id=lease["id"])
    assert (stored.verdict, stored.relevance, stored.item.status) == ("correct", 4, ItemStatus.VERIFIED)


def test_a_fresh_lease_answers_its_list_fields_as_lists(sample_items, config, make_user):
    """The lease's item is read by hand (the queue's candidate statement): its JSON fields are answered as the ORM
    reads them, for every type of item."""
    from rest_framework.test import APIClient

    from portal.api_tokens import api_token_create

    for _ in sample_items:
        _, key = api_token_create(user=make_user("reviewer"), name="t", mfa_verified=False)
        lease = APIClient(HTTP_AUTHORIZATION=f"Token {key}").post("/api/review/next/", {}, format="json").json()
        orm = QAItem.objects.get(uid=lease["item"]["uid"])
        for field in ("options", "answer_list", "reasoning", "incorrect_reasoning_step"):
            assert lease["item"][field] == getattr(orm, field), field
            assert isinstance(lease["item"][field], list), field
