"""Giving an item back (issue 45, F33): a reviewer who should not judge an item (outside their field, a conflict of
interest) ends the lease without a judgement; the item goes to someone else and never back to them, the lease ends
as an expired one does, the reason is audited, and a gold lease given back looks exactly like a real one."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Assignment, QAItem
from annotation.services.gold import gold_mark
from annotation.services.queue import assignment_give_back, assignment_next
from annotation.workflow import ItemStatus, Stage
from portal.errors import Conflict, DomainError, NotAllowed
from portal.models import AuditEntry

pytestmark = pytest.mark.django_db

READ_GUIDELINES = {"guidelines_read": "on"}


def _api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def _given_back_entry(lease: Assignment) -> AuditEntry:
    return AuditEntry.objects.get(object_type="annotation.assignment", object_id=str(lease.pk))


def test_a_primary_item_given_back_goes_to_someone_else_and_never_back(sample_items, config, make_user):
    alice, bob = make_user("reviewer"), make_user("reviewer")
    lease = assignment_next(reviewer=alice, qa_type="multi_hop")
    assert QAItem.objects.get(pk=lease.item_id).status == ItemStatus.IN_REVIEW

    ended = assignment_give_back(assignment_id=lease.pk, reviewer=alice, reason="conflict_of_interest", note="my own")

    assert ended.status == Assignment.Status.RELEASED and ended.finished_at is not None
    assert Assignment.objects.filter(pk=lease.pk).exists()  # the row stays: the queue never hands it to Alice again
    assert QAItem.objects.get(pk=lease.item_id).status == ItemStatus.IMPORTED  # back in the queue, as on expiry
    entry = AuditEntry.objects.filter(action="assignment_given_back").get()
    assert entry.actor == alice and entry.after["reason"] == "conflict_of_interest" and entry.after["note"] == "my own"
    # Alice works through every multi-hop item she may have: the one she gave back is not among them.
    seen = []
    while (following := assignment_next(reviewer=alice, qa_type="multi_hop")) is not None:
        if following.item.qa_type != "multi_hop":
            break
        seen.append(following.item_id)
        assignment_give_back(assignment_id=following.pk, reviewer=alice, reason="outside_field")
    assert lease.item_id not in seen
    # Bob is given it (he is the only other reviewer; every other multi-hop item Alice gave back too).
    taken = set()
    while (following := assignment_next(reviewer=bob, qa_type="multi_hop")) is not None:
        if following.item.qa_type != "multi_hop":
            break
        taken.add(following.item_id)
        assignment_give_back(assignment_id=following.pk, reviewer=bob, reason="other")
    assert lease.item_id in taken


def test_only_ones_own_live_lease_with_a_known_reason_is_given_back(sample_items, config, make_user, review):
    alice, bob = make_user("reviewer"), make_user("reviewer")
    lease = assignment_next(reviewer=alice)
    with pytest.raises(NotAllowed):
        assignment_give_back(assignment_id=lease.pk, reviewer=bob, reason="other")
    with pytest.raises(DomainError):
        assignment_give_back(assignment_id=lease.pk, reviewer=alice, reason="bored")
    review(lease)
    with pytest.raises(Conflict):
        assignment_give_back(assignment_id=lease.pk, reviewer=alice, reason="other")
    assert not AuditEntry.objects.filter(action="assignment_given_back").exists()


def test_a_gold_lease_given_back_looks_exactly_like_a_real_one(sample_items, config, organizer, make_user, client):
    gold_mark(item=sample_items[0], expected_verdict="correct", by=organizer)
    config.gold_rate = 1.0
    config.save()
    alice = make_user("reviewer")
    answers, entries = [], []
    for draw in (0.0, 0.99):  # a gold lease, then a real one
        lease = assignment_next(reviewer=alice, gold_draw=draw)
        assert (lease.stage == Stage.GOLD) == (draw == 0.0)
        answer = _api(alice).post(
            reverse("api_review_give_back", args=[lease.pk]), {"reason": "outside_field"}, format="json"
        )
        assert answer.status_code == 200
        body = answer.json()
        assert body["id"] == lease.pk and body["status"] == "released"
        answers.append(sorted(body))
        entry = _given_back_entry(lease)
        entries.append((entry.action, entry.before, sorted(entry.after.items()), entry.note))
    assert answers[0] == answers[1]
    assert entries[0] == entries[1]
    # The gold item is not handed to Alice again either.
    assert all(a.item_id != sample_items[0].pk for a in [assignment_next(reviewer=alice, gold_draw=0.0)] if a)


def test_the_api_refuses_someone_elses_lease_and_an_unknown_reason(sample_items, config, make_user):
    alice, bob = make_user("reviewer"), make_user("reviewer")
    lease = assignment_next(reviewer=alice)
    url = reverse("api_review_give_back", args=[lease.pk])
    assert _api(bob).post(url, {"reason": "other"}, format="json").status_code == 403
    assert _api(alice).post(url, {"reason": "bored"}, format="json").status_code == 400
    assert _api(make_user("ranker")).post(url, {"reason": "other"}, format="json").status_code == 403
    assert Assignment.objects.get(pk=lease.pk).status == Assignment.Status.ACTIVE


def test_the_review_page_gives_the_item_back_and_opens_the_next(client, sample_items, config, make_user):
    alice = make_user("reviewer")
    client.force_login(alice)
    client.post(reverse("review_next"), READ_GUIDELINES)
    lease = Assignment.objects.get(reviewer=alice)
    page = client.get(reverse("review_assignment", args=[lease.pk])).content.decode()
    assert 'id="give-back-panel"' in page and "Conflict of interest" in page and "Outside my field" in page

    response = client.post(reverse("review_give_back", args=[lease.pk]), {"reason": "outside_field"})

    assert response.status_code == 302
    following = Assignment.objects.filter(reviewer=alice).exclude(pk=lease.pk).get()
    assert following.item_id != lease.item_id and reverse("review_assignment", args=[following.pk]) in response.url
    assert Assignment.objects.get(pk=lease.pk).status == Assignment.Status.RELEASED
    assert any("will not come back to you" in str(m) for m in get_messages(response.wsgi_request))
    # Without a reason: the page again, saying what is missing, and the lease still held.
    refused = client.post(reverse("review_give_back", args=[following.pk]), {})
    assert refused.status_code == 400 and Assignment.objects.get(pk=following.pk).status == "active"


def test_after_a_feedback_note_the_page_says_reviewing_goes_on(client, sample_items, config, make_user):
    alice = make_user("reviewer")
    client.force_login(alice)
    client.post(reverse("review_next"), READ_GUIDELINES)
    lease = Assignment.objects.get(reviewer=alice)
    response = client.post(
        reverse("review_feedback", args=[lease.pk]),
        {"text": "the excerpt is cut off", "idempotency_key": str(lease.idempotency_key)},
        follow=True,
    )
    page = response.content.decode()
    assert "in place of your review of that item" in page and "the next item still needs your review" in page
