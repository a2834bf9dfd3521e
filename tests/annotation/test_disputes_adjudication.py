"""Disputes and feedback hold items; adjudication decides; reviewers see outcomes; organizers see the figures."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Dispute, FeedbackNote, QAItem
from annotation.selectors.adjudication import adjudication_queue
from annotation.selectors.disputes import disputes_visible_to, item_has_open_issue
from annotation.selectors.vetting import reviewer_quality, vetting_progress
from annotation.services.adjudication import item_adjudicate
from annotation.services.disputes import (
    dispute_comment_add,
    dispute_file,
    dispute_reject,
    feedback_close,
    feedback_file,
)
from annotation.services.queue import assignment_next
from annotation.services.release_rules import SelectionRule
from annotation.workflow import ItemStatus
from portal.errors import Conflict, NotAllowed
from portal.models import AuditEntry

pytestmark = pytest.mark.django_db


def _dispute(assignment, **kw):
    return dispute_file(
        raised_by=assignment.reviewer,
        assignment_id=assignment.pk,
        idempotency_key=assignment.idempotency_key,
        category=kw.pop("category", "factual_error"),
        text=kw.pop("text", "The answer contradicts the excerpt."),
        **kw,
    )


def test_a_disputed_item_is_held_and_out_of_release_and_queue(sample_items, config, make_user):
    alice = make_user("reviewer")
    assignment = assignment_next(reviewer=alice)
    dispute = _dispute(assignment)
    item = QAItem.objects.get(pk=assignment.item_id)
    assert item.status == ItemStatus.HELD and item.held_from == ItemStatus.IN_REVIEW
    assert item_has_open_issue(item)
    assert dispute.status == "open" and assignment.__class__.objects.get(pk=assignment.pk).status == "released"
    # nobody else is handed the held item
    others = [assignment_next(reviewer=make_user("reviewer")) for _ in range(len(sample_items))]
    assert item.pk not in [a.item_id for a in others if a]
    assert item in adjudication_queue(user=make_user("adjudicator"))


def test_verified_item_with_open_feedback_is_not_release_eligible(sample_items, config, reviewer, review, make_user):
    config.second_share = 0.0
    config.save()
    assignment = assignment_next(reviewer=reviewer)
    review(assignment, "correct", 5)
    item = QAItem.objects.get(pk=assignment.item_id)
    assert item in SelectionRule().queryset()
    adjudicator = make_user("adjudicator")
    note = feedback_file(author=adjudicator, item=item, text="Typo in the question")
    assert QAItem.objects.get(pk=item.pk).status == ItemStatus.HELD
    assert item not in SelectionRule().queryset()
    feedback_close(note=note, actor=adjudicator, response="fixed upstream")
    item.refresh_from_db()
    assert item.status == ItemStatus.VERIFIED and item in SelectionRule().queryset()


def test_rejected_dispute_returns_an_unreviewed_item_to_the_queue(sample_items, config, make_user):
    alice = make_user("reviewer")
    assignment = assignment_next(reviewer=alice)
    dispute = _dispute(assignment)
    dispute_reject(dispute=dispute, resolver=make_user("adjudicator"), note="The excerpt supports it.")
    assert QAItem.objects.get(pk=assignment.item_id).status == ItemStatus.IMPORTED
    dispute.refresh_from_db()
    assert dispute.status == "rejected" and dispute.resolved_at and dispute.resolver_id


def test_adjudication_of_a_disputed_item_upholds_the_dispute_and_rejects_the_item(sample_items, config, make_user):
    alice = make_user("reviewer")
    assignment = assignment_next(reviewer=alice)
    dispute = _dispute(assignment, quote_text=None or "")
    adjudicator = make_user("adjudicator")
    item_adjudicate(
        item=assignment.item, adjudicator=adjudicator, verdict="incorrect", relevance=4, reason="Indeed wrong."
    )
    item = QAItem.objects.get(pk=assignment.item_id)
    assert (item.status, item.final_verdict, item.final_relevance, item.final_source) == (
        "rejected",
        "incorrect",
        4.0,
        "adjudication",
    )
    dispute.refresh_from_db()
    assert dispute.status == "upheld"
    mine = disputes_visible_to(alice)
    assert [d.status for d in mine] == ["upheld"]  # the reviewer sees the outcome of her own dispute
    assert not disputes_visible_to(make_user("reviewer")).exists()


def test_disagreement_is_adjudicated_and_overturn_rates_are_counted(sample_items, config, make_user, review):
    config.second_share = 1.0
    config.save()
    alice, bob = make_user("reviewer", email="alice@test.portal"), make_user("reviewer", email="bob@test.portal")
    a = assignment_next(reviewer=alice)
    review(a, "correct", 5)
    review(assignment_next(reviewer=bob), "incorrect", 5)
    item = QAItem.objects.get(pk=a.item_id)
    assert item.status == ItemStatus.IN_ADJUDICATION and item in adjudication_queue(user=make_user("adjudicator"))
    with pytest.raises(NotAllowed):
        item_adjudicate(item=item, adjudicator=alice, verdict="correct", relevance=5, reason="x")
    item_adjudicate(
        item=item, adjudicator=make_user("adjudicator"), verdict="correct", relevance=5, reason="Source p. 3"
    )
    item.refresh_from_db()
    assert item.status == ItemStatus.VERIFIED and item.final_source == "adjudication"
    quality = {row["email"]: row for row in reviewer_quality()}
    assert quality["bob@test.portal"]["overturn_rate"] == 1.0
    assert quality["alice@test.portal"]["overturn_rate"] == 0.0
    with pytest.raises(Conflict):  # already decided
        item_adjudicate(item=item, adjudicator=make_user("adjudicator"), verdict="correct", relevance=5, reason="again")


def test_dispute_thread_and_resolution_time(sample_items, config, make_user):
    alice = make_user("reviewer")
    lease = assignment_next(reviewer=alice)  # whichever item the seeded queue order gives her
    dispute = _dispute(lease, quote_text=lease.item.passage.text[:20] if lease.item.passage else "")
    dispute_comment_add(dispute=dispute, author=alice, text="See the second sentence.")
    with pytest.raises(NotAllowed):
        dispute_comment_add(dispute=dispute, author=make_user("reviewer"), text="me too")
    dispute_reject(dispute=dispute, resolver=make_user("organizer"))
    progress = vetting_progress()
    assert progress["open_disputes"] == 0 and progress["dispute_resolution"]["resolved"] == 1
    assert AuditEntry.objects.filter(object_type="annotation.dispute").count() == 3


def test_quoted_span_must_come_from_the_excerpt(sample_items, config, reviewer):
    from portal.errors import DomainError

    assignment = assignment_next(reviewer=reviewer)
    with pytest.raises(DomainError):
        _dispute(assignment, quote_text="words that are nowhere in the excerpt at all 12345")
    assert not Dispute.objects.exists() and not FeedbackNote.objects.exists()


def _api(user):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user)
    return client


def test_closing_all_open_issues_of_an_item_is_one_audited_step_page_and_api(
    sample_items, config, reviewer, review, make_user, client
):
    config.second_share = 0.0
    config.save()
    assignment = assignment_next(reviewer=reviewer)
    review(assignment, "correct", 5)
    item = QAItem.objects.get(pk=assignment.item_id)
    organizer = make_user("organizer")
    dispute_file(raised_by=organizer, item=item, category="ambiguous", text="Two answers fit.")
    dispute_file(raised_by=organizer, item=item, category="other", text="The source is outdated.")
    feedback_file(author=organizer, item=item, text="Typo in the question")
    assert QAItem.objects.get(pk=item.pk).status == ItemStatus.HELD

    url = f"/api/adjudication/{item.uid}/issues/reject/"
    assert _api(reviewer).post(url, {"text": "fine"}, format="json").status_code == 403
    assert item_has_open_issue(item)
    response = _api(make_user("adjudicator")).post(url, {"text": "both fit the excerpt"}, format="json")
    assert response.status_code == 200
    assert response.json() == {
        "uid": item.uid,
        "status": ItemStatus.VERIFIED,
        "disputes_rejected": 2,
        "feedback_notes_closed": 1,
    }
    assert not item_has_open_issue(item)
    assert set(Dispute.objects.filter(item=item).values_list("status", flat=True)) == {"rejected"}
    assert AuditEntry.objects.filter(action="dispute_resolved").count() == 2
    assert AuditEntry.objects.filter(action="feedback_closed").count() == 1

    # The page's "close the open issues" goes through the same service.
    dispute_file(raised_by=organizer, item=item, category="other", text="Still unsure.")
    client.force_login(make_user("adjudicator"))
    page = client.post(reverse("adjudication_item", args=[item.uid]), {"action": "reject_issues", "note": "fits"})
    assert page.status_code == 302 and not item_has_open_issue(item)
    assert QAItem.objects.get(pk=item.pk).status == ItemStatus.VERIFIED
