"""Late reviews: a review sent after its 30-minute hold ran out is stored, marked late, when nobody else has taken
the item meanwhile and the item still waits for that review, whether or not the sweeper has run; otherwise it is
refused with the reason and the page keeps what the reviewer wrote."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Assignment, QAItem, Review
from annotation.services.disputes import dispute_file
from annotation.services.queue import assignment_next, assignments_expire
from annotation.workflow import ItemStatus, Stage
from portal.errors import Conflict
from portal.models import AuditEntry

pytestmark = pytest.mark.django_db

TEXT = "LATE-BUT-CAREFUL-COMMENT-5d1e"


def _expire(assignment, minutes=10):
    """Move the lease into the past: it ran out ``minutes`` ago, as if the reviewer had taken that much longer."""
    shift = assignment.expires_at - timezone.now() + timedelta(minutes=minutes)
    Assignment.objects.filter(pk=assignment.pk).update(
        created_at=assignment.created_at - shift, expires_at=assignment.expires_at - shift
    )


def _form(assignment):
    return {
        "idempotency_key": str(assignment.idempotency_key), "verdict": "incorrect", "relevance": "4",
        "comment": TEXT, "qa_type": "",
    }  # fmt: skip


def _api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_late_review_is_stored_after_the_sweeper_ran_when_nobody_took_the_item(
    sample_items, config, reviewer, review
):
    config.second_share = 0.0
    config.save()
    lease = assignment_next(reviewer=reviewer)
    _expire(lease)
    assert assignments_expire() == 1
    assert QAItem.objects.get(pk=lease.item_id).status == ItemStatus.IMPORTED
    stored = review(lease, "correct", 5, comment=TEXT)
    item = QAItem.objects.get(pk=lease.item_id)
    assert item.status == ItemStatus.VERIFIED and item.final_source == "primary"
    lease.refresh_from_db()
    assert lease.status == Assignment.Status.SUBMITTED and lease.finished_at > lease.expires_at
    entry = AuditEntry.objects.get(action="review_created", object_id=str(stored.pk))
    assert entry.after["late_seconds"] >= 600
    # the item was not handed out twice
    assert Assignment.objects.filter(item_id=lease.item_id, stage=Stage.PRIMARY).count() == 1


def test_a_late_review_is_refused_once_someone_else_took_the_item_and_the_page_keeps_the_text(
    client, sample_items, config, make_user
):
    alice, bob = make_user("reviewer"), make_user("reviewer")
    lease = assignment_next(reviewer=alice, qa_type="true_false")
    # Only Alice's item is left of its type, so Bob (who starts elsewhere in the random order) is given it.
    QAItem.objects.filter(qa_type="true_false").exclude(pk=lease.item_id).update(status=ItemStatus.VERIFIED)
    taken = assignment_next(reviewer=bob, qa_type="true_false", now=timezone.now() + timedelta(seconds=1801))
    assert taken.item_id == lease.item_id
    _expire(lease)
    client.force_login(alice)
    response = client.post(reverse("review_assignment", args=[lease.pk]), _form(lease))
    html = response.content.decode()
    assert response.status_code == 409
    assert "30-minute hold on this item ran out at" in html and "another reviewer has taken the item" in html
    assert TEXT in html  # what she wrote is in the form again
    api = _api(alice).post(f"/api/review/assignments/{lease.pk}/review/", _form(lease), format="json")
    assert api.status_code == 409 and api.json()["code"] == "lease_expired"
    assert not Review.objects.filter(reviewer=alice).exists()


def test_a_late_second_review_is_refused_when_the_item_moved_on(sample_items, config, make_user, review):
    config.second_share = 1.0
    config.save()
    alice, bob = make_user("reviewer"), make_user("reviewer")
    review(assignment_next(reviewer=alice, qa_type="true_false"), "correct", 5)
    second = assignment_next(reviewer=bob, qa_type="true_false")
    item = QAItem.objects.get(pk=second.item_id)
    dispute_file(raised_by=make_user("organizer"), item=item, category="ambiguous", text="Two answers fit.")
    with pytest.raises(Conflict) as refused:
        review(second, "correct", 5, now=second.expires_at + timedelta(minutes=1))
    assert refused.value.code == "lease_expired" and "the item has moved on (it is now held)" in str(refused.value)


def test_a_lease_ended_by_a_dispute_takes_no_late_review(sample_items, config, reviewer, review):
    lease = assignment_next(reviewer=reviewer)
    dispute_file(
        raised_by=reviewer, assignment_id=lease.pk, idempotency_key=lease.idempotency_key, category="other", text="x"
    )
    with pytest.raises(Conflict) as refused:
        review(lease, "correct", 5, now=lease.expires_at + timedelta(minutes=1))
    assert refused.value.code == "lease_ended"


def test_adjudicators_see_that_a_review_came_late(client, sample_items, config, make_user, review):
    config.second_share = 1.0
    config.save()
    alice, bob = make_user("reviewer"), make_user("reviewer")
    review(assignment_next(reviewer=alice, qa_type="true_false"), "correct", 5)
    second = assignment_next(reviewer=bob, qa_type="true_false")
    _expire(second)
    client.force_login(bob)
    response = client.post(reverse("review_assignment", args=[second.pk]), _form(second))
    assert response.status_code == 302
    item = QAItem.objects.get(pk=second.item_id)
    assert item.status == ItemStatus.IN_ADJUDICATION
    adjudicator = make_user("adjudicator")
    client.force_login(adjudicator)
    html = client.get(reverse("adjudication_item", args=[item.uid])).content.decode()
    assert "late: the hold ran out at" in html
    reviews = {r["stage"]: r for r in _api(adjudicator).get(f"/api/adjudication/{item.uid}/").json()["reviews"]}
    assert reviews["secondary"]["created_at"] > reviews["secondary"]["lease_expires_at"]
    assert reviews["primary"]["created_at"] < reviews["primary"]["lease_expires_at"]


@pytest.mark.django_db(transaction=True)
def test_a_late_review_gives_way_to_a_takeover_in_progress_instead_of_deadlocking(
    sample_items, config, reviewer, review
):
    """A "next" taking over the slot holds the item row (and would next end this expired lease): the late review
    does not wait for it (that would deadlock) but is refused with the reason at once."""
    lease = assignment_next(reviewer=reviewer)
    locked, done = threading.Event(), threading.Event()

    def taker():
        try:
            with transaction.atomic():
                QAItem.objects.select_for_update().get(pk=lease.item_id)
                locked.set()
                done.wait(20)
        finally:
            connection.close()

    thread = threading.Thread(target=taker)
    thread.start()
    try:
        assert locked.wait(20)
        started = time.monotonic()
        with pytest.raises(Conflict) as refused:
            review(lease, "correct", 5, now=lease.expires_at + timedelta(minutes=1))
        assert time.monotonic() - started < 5
    finally:
        done.set()
        thread.join(20)
    assert refused.value.code == "lease_expired" and "handed to another reviewer" in str(refused.value)
    lease.refresh_from_db()
    assert lease.status == Assignment.Status.ACTIVE and not Review.objects.exists()
