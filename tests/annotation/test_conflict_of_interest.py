"""Blinding per item and conflict of interest: whoever was given an item to review (a live second-review lease,
a stored review, a gold lease) never sees its other reviews, gold status or disputes, and never decides it, whatever
other roles they hold. The demo adjudicator is also a reviewer: that is the case tested through every door."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import QAItem
from annotation.selectors.adjudication import adjudication_queue
from annotation.selectors.disputes import disputes_visible_to
from annotation.selectors.vetting import vetting_progress
from annotation.services.adjudication import item_adjudicate
from annotation.services.disputes import (
    dispute_comment_add,
    dispute_file,
    dispute_reject,
    feedback_close,
    feedback_file,
    item_issues_reject,
)
from annotation.services.gold import gold_mark
from annotation.services.queue import assignment_next
from annotation.workflow import ItemStatus
from portal.errors import NotAllowed

pytestmark = pytest.mark.django_db

SECRET_COMMENT = "FIRST-REVIEW-SECRET-91c2"


def _api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def second_lease(sample_items, config, make_user, review):
    """Alice reviewed an item (a distinctive comment); Dana, reviewer and adjudicator, holds its second review."""
    config.second_share = 1.0
    config.save()
    alice, dana = make_user("reviewer"), make_user("reviewer", "adjudicator")
    first = assignment_next(reviewer=alice, qa_type="multi_hop")
    review(first, "incorrect", 2, comment=SECRET_COMMENT)
    second = assignment_next(reviewer=dana, qa_type="multi_hop")
    assert second.item_id == first.item_id
    return alice, dana, second


def test_a_lease_holder_with_the_adjudicator_role_cannot_open_the_adjudication_page(client, second_lease):
    _, dana, second = second_lease
    client.force_login(dana)
    response = client.get(reverse("adjudication_item", args=[second.item.uid]))
    html = response.content.decode()
    assert response.status_code == 403
    assert SECRET_COMMENT not in html and "Incorrect" not in html
    assert f"You were given item {second.item.uid} to review" in html
    posted = client.post(
        reverse("adjudication_item", args=[second.item.uid]), {"verdict": "correct", "relevance": "5", "reason": "x"}
    )
    assert posted.status_code == 403
    assert QAItem.objects.get(pk=second.item_id).status == ItemStatus.IN_SECOND_REVIEW


def test_a_lease_holder_with_the_adjudicator_role_cannot_read_the_first_review_through_the_api(second_lease):
    _, dana, second = second_lease
    response = _api(dana).get(f"/api/adjudication/{second.item.uid}/")
    assert response.status_code == 403 and response.json()["code"] == "conflict_of_interest"
    assert SECRET_COMMENT not in response.content.decode()
    decided = _api(dana).post(
        f"/api/adjudication/{second.item.uid}/", {"verdict": "correct", "relevance": 5, "reason": "x"}, format="json"
    )
    assert decided.status_code == 403


def test_an_adjudicator_who_reviewed_the_item_neither_sees_it_queued_nor_decides_it(
    client, second_lease, review, make_user
):
    _, dana, second = second_lease
    review(second, "correct", 5)  # disagrees with the first review
    item = QAItem.objects.get(pk=second.item_id)
    assert item.status == ItemStatus.IN_ADJUDICATION
    other = make_user("adjudicator")
    assert item in adjudication_queue(user=other)
    assert item not in adjudication_queue(user=dana)
    client.force_login(dana)
    assert item.uid not in client.get(reverse("adjudication_queue")).content.decode()
    assert item.uid not in {row["uid"] for row in _api(dana).get("/api/adjudication/").json()}
    assert item.uid in {row["uid"] for row in _api(other).get("/api/adjudication/").json()}
    with pytest.raises(NotAllowed):
        item_adjudicate(item=item, adjudicator=dana, verdict="correct", relevance=5, reason="mine was right")
    item_adjudicate(item=item, adjudicator=other, verdict="correct", relevance=5, reason="Source p. 3")


def test_an_adjudicator_who_reviewed_the_item_cannot_close_its_disputes(client, second_lease, review, make_user):
    alice, dana, second = second_lease
    review(second, "correct", 5)
    item = QAItem.objects.get(pk=second.item_id)
    organizer = make_user("organizer")
    dispute = dispute_file(raised_by=organizer, item=item, category="ambiguous", text="Two answers fit.")
    note = feedback_file(author=organizer, item=item, text="Typo in the question")
    with pytest.raises(NotAllowed):
        dispute_reject(dispute=dispute, resolver=dana, note="fine")
    with pytest.raises(NotAllowed):
        feedback_close(note=note, actor=dana)
    with pytest.raises(NotAllowed):
        dispute_comment_add(dispute=dispute, author=dana, text="I agree with myself")
    assert dispute not in disputes_visible_to(dana)
    client.force_login(dana)
    page = client.post(reverse("adjudication_item", args=[item.uid]), {"action": "reject_issues", "note": "fine"})
    assert page.status_code == 403
    assert client.get(reverse("dispute_detail", args=[dispute.pk])).status_code == 403
    assert _api(dana).post(f"/api/disputes/{dispute.pk}/reject/", {"text": "fine"}, format="json").status_code == 403
    assert _api(dana).get(f"/api/disputes/{dispute.pk}/").status_code == 403
    assert (
        _api(dana).post(f"/api/adjudication/{item.uid}/issues/reject/", {"text": "x"}, format="json").status_code == 403
    )
    with pytest.raises(NotAllowed):
        item_issues_reject(item=item, resolver=dana, note="fine")
    dispute.refresh_from_db()
    assert dispute.status == "open"
    # someone who has not judged the item closes it
    dispute_reject(dispute=dispute, resolver=make_user("adjudicator"), note="one answer fits")


def test_an_organizer_who_reviews_is_refused_the_item_page_but_other_organizers_keep_it(
    client, second_lease, make_user
):
    _, _, second = second_lease
    organizer_reviewer = make_user("organizer", "reviewer")
    # a live second lease is taken by someone else; this organizer reviewed another item
    other = assignment_next(reviewer=organizer_reviewer)
    client.force_login(organizer_reviewer)
    assert client.get(reverse("item_detail", args=[other.item.uid])).status_code == 403
    assert _api(organizer_reviewer).get(f"/api/items/{other.item.uid}/").status_code == 403
    assert client.get(reverse("item_detail", args=[second.item.uid])).status_code == 200
    client.force_login(make_user("organizer"))
    assert client.get(reverse("item_detail", args=[other.item.uid])).status_code == 200


def test_gold_status_is_hidden_from_adjudicators_and_from_organizers_given_the_item(
    client, sample_items, config, make_user
):
    organizer = make_user("organizer")
    gold_item = QAItem.objects.filter(status=ItemStatus.IMPORTED).first()
    gold_mark(item=gold_item, expected_verdict="incorrect", by=organizer, planted_error=True)
    client.force_login(make_user("adjudicator"))
    html = client.get(reverse("adjudication_item", args=[gold_item.uid])).content.decode()
    assert "gold_marked" not in html and "expected_verdict" not in html and "planted" not in html
    organizer_reviewer = make_user("organizer", "reviewer")
    client.force_login(organizer_reviewer)
    assert gold_item.uid in client.get(reverse("vetting_dashboard")).content.decode()
    config.gold_rate = 1.0
    config.save()
    lease = assignment_next(reviewer=organizer_reviewer, gold_draw=0.0)
    assert lease.item_id == gold_item.pk
    assert gold_item.uid not in client.get(reverse("vetting_dashboard")).content.decode()
    assert gold_item.uid not in {g["item"] for g in _api(organizer_reviewer).get("/api/gold/").json()}
    assert gold_item.uid in {g["item"] for g in _api(organizer).get("/api/gold/").json()}


def test_when_every_adjudicator_reviewed_the_item_organizers_are_told(client, second_lease, review, make_user):
    _, dana, second = second_lease
    review(second, "correct", 5)
    item = QAItem.objects.get(pk=second.item_id)
    assert vetting_progress()["adjudication_blocked"] == [item.uid]
    client.force_login(make_user("organizer"))
    html = client.get(reverse("vetting_progress")).content.decode()
    assert item.uid in html and "every adjudicator reviewed these items" in html
    make_user("adjudicator")  # someone free to decide it
    assert vetting_progress()["adjudication_blocked"] == []


def test_the_admin_lists_leave_out_what_a_staff_member_was_given_to_review(client, second_lease, make_user):
    alice, dana, second = second_lease
    dana.is_staff = dana.is_superuser = True
    dana.save()
    client.force_login(dana)
    assert "0 reviews" in client.get("/admin/annotation/review/").content.decode()
    staff = make_user("organizer")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    assert "1 review" in client.get("/admin/annotation/review/").content.decode()


def test_a_staff_member_who_reviews_reads_in_the_admin_only_judgements_of_final_items(client, second_lease, make_user):
    """The admin's lists record nothing (the blinding rule's exposures come from the portal's pages), so a staff
    member who also reviews must not read there the first review of an item still waiting for its second review:
    the queue could hand it to them next."""
    _, _, second = second_lease
    eve = make_user("organizer", "reviewer")
    eve.is_staff = eve.is_superuser = True
    eve.save()
    client.force_login(eve)
    assert QAItem.objects.get(pk=second.item_id).status == "in_second_review"
    assert "0 reviews" in client.get("/admin/annotation/review/").content.decode()
    QAItem.objects.filter(pk=second.item_id).update(status="verified")  # final: never goes back to review
    assert "1 review" in client.get("/admin/annotation/review/").content.decode()
