"""A review "cannot tell: outside my field" judges nothing: the review is kept but set aside at once, its lease
ends, the item goes back to the queue for the same stage, the reviewer is never given it again (their lease row stays:
the blinding rule ``review_barred_q``) and someone else is; the review counts in no agreement figure and no progress
figure."""

from __future__ import annotations

import pytest
from django.urls import reverse

from analytics.selectors import vetting_ratings
from annotation.models import Assignment, QAItem, Review
from annotation.selectors.blinding import review_barred_q
from annotation.selectors.vetting import progress_bars, vetting_progress
from annotation.services.queue import assignment_next
from annotation.services.review_edit import answer_edit, answer_own
from annotation.workflow import (
    TRANSITIONS,
    Action,
    ItemStatus,
    Route,
    counts_as_judgement,
    next_status,
    route_after_primary,
    route_after_secondary,
)
from portal.models import AuditEntry

pytestmark = pytest.mark.django_db

S, A = ItemStatus, Action


# --- the state machine (pure) ----------------------------------------------------------------------------------


def test_only_outside_my_field_is_not_a_judgement():
    assert not counts_as_judgement("outside_field")
    assert all(counts_as_judgement(reason) for reason in ("", "excerpt", "ambiguous", "outdated"))


@pytest.mark.parametrize("selected", [True, False])
def test_a_first_review_outside_the_field_sends_the_item_back_whatever_the_draw(selected):
    route = route_after_primary(verdict="cannot_tell", relevance=3, selected=selected, reason="outside_field")
    assert route == Route(A.RETURN_TO_QUEUE)  # no final verdict, no second review
    assert next_status(next_status(S.IN_REVIEW, A.SUBMIT_PRIMARY), route.action) == S.IMPORTED


def test_a_fixable_reason_routes_as_cannot_tell_always_did():
    for reason in ("excerpt", "ambiguous", "outdated"):
        assert route_after_primary(verdict="cannot_tell", relevance=3, selected=False, reason=reason).action == (
            A.ROUTE_ADJUDICATE
        )
        assert route_after_primary(verdict="cannot_tell", relevance=3, selected=True, reason=reason).action == (
            A.ROUTE_SECOND
        )
        routes = route_after_secondary(
            first=("cannot_tell", 3), second=("cannot_tell", 3), relevance_gap=2, reason=reason
        )
        assert [r.action for r in routes] == [A.SUBMIT_AGREE, A.ROUTE_ADJUDICATE]


def test_a_second_review_outside_the_field_compares_nothing_and_the_item_waits_for_another():
    # Even where the verdicts would disagree (or agree), nothing is compared.
    for first in (("correct", 5), ("cannot_tell", 3)):
        routes = route_after_secondary(first=first, second=("cannot_tell", 3), relevance_gap=2, reason="outside_field")
        assert routes == [Route(A.RETURN_TO_QUEUE)]
    assert next_status(S.IN_SECOND_REVIEW, A.RETURN_TO_QUEUE) == S.IN_SECOND_REVIEW


def test_the_return_move_leaves_only_the_states_a_review_is_stored_in():
    sources = {state for state, action in TRANSITIONS if action == A.RETURN_TO_QUEUE}
    assert sources == {S.REVIEWED, S.IN_SECOND_REVIEW}


# --- first reviews ------------------------------------------------------------------------------------------------


def _only(item: QAItem) -> None:
    """Every other item is done, so the queue has this one item to hand out (or none)."""
    QAItem.objects.exclude(pk=item.pk).update(status=ItemStatus.VERIFIED, final_verdict="correct")


def test_outside_the_field_the_item_goes_back_to_someone_else_never_to_the_reviewer(
    sample_items, config, make_user, review
):
    alice, bob = make_user("reviewer"), make_user("reviewer")
    lease = assignment_next(reviewer=alice)
    item = QAItem.objects.get(pk=lease.item_id)
    _only(item)

    stored = review(lease, "cannot_tell", 3, cannot_tell_reason="outside_field")

    assert stored.superseded_at is not None and stored.cannot_tell_reason == "outside_field"  # kept, set aside
    lease.refresh_from_db()
    assert lease.status == Assignment.Status.SUPERSEDED and lease.finished_at is not None
    item.refresh_from_db()
    assert item.status == ItemStatus.IMPORTED and item.final_verdict == "" and item.second_review is False
    moves = list(
        AuditEntry.objects.filter(object_type="annotation.qaitem", object_id=str(item.pk))
        .order_by("pk")
        .values_list("action", flat=True)
    )
    assert moves[-2:] == ["item_submit_primary", "item_return_to_queue"]
    # Alice is barred from it by the one blinding rule; the queue has nothing else, so nothing for her.
    assert QAItem.objects.filter(pk=item.pk).filter(review_barred_q(alice)).exists()
    assert assignment_next(reviewer=alice) is None
    # Bob is given it, reviews it, and his review is the item's first review.
    taken = assignment_next(reviewer=bob)
    assert taken.item_id == item.pk and taken.stage == "primary"
    config.second_share = 0.0
    config.save()
    review(taken, "correct", 4)
    item.refresh_from_db()
    assert (item.status, item.final_verdict, item.final_relevance, item.final_source) == (
        ItemStatus.VERIFIED,
        "correct",
        4.0,
        "primary",
    )


def test_a_second_review_outside_the_field_frees_the_second_slot(sample_items, config, make_user, review):
    config.second_share = 1.0
    config.save()
    alice, bob, carol = make_user("reviewer"), make_user("reviewer"), make_user("reviewer")
    first = assignment_next(reviewer=alice)
    item = QAItem.objects.get(pk=first.item_id)
    _only(item)
    review(first, "correct", 5)
    second = assignment_next(reviewer=bob)
    assert (second.item_id, second.stage) == (item.pk, "secondary")

    review(second, "cannot_tell", 2, cannot_tell_reason="outside_field")

    item.refresh_from_db()
    assert item.status == ItemStatus.IN_SECOND_REVIEW and item.final_verdict == ""
    assert Assignment.objects.get(pk=second.pk).status == Assignment.Status.SUPERSEDED
    assert assignment_next(reviewer=bob) is None and assignment_next(reviewer=alice) is None
    third = assignment_next(reviewer=carol)
    assert (third.item_id, third.stage) == (item.pk, "secondary")
    review(third, "correct", 4)
    item.refresh_from_db()
    # Agreement of Alice and Carol; Bob's 2 would have sent the pair to adjudication (a gap of 3).
    assert (item.status, item.final_relevance, item.final_source) == (ItemStatus.VERIFIED, 4.5, "agreement")


def test_the_review_counts_in_no_agreement_statistic_nor_progress(sample_items, config, make_user, review):
    config.second_share = 0.0
    config.save()
    alice, bob = make_user("reviewer"), make_user("reviewer")
    lease = assignment_next(reviewer=alice)
    item = QAItem.objects.get(pk=lease.item_id)
    _only(item)
    review(lease, "cannot_tell", 3, cannot_tell_reason="outside_field")

    assert vetting_ratings().empty
    progress = vetting_progress()
    assert progress["stages"]["primary_reviews"] == 0
    primary_bar = next(bar for bar in progress_bars(progress)["stages"] if bar.label == "Primary review")
    assert primary_bar.done == 0

    review(assignment_next(reviewer=bob), "incorrect", 2)
    ratings = vetting_ratings()
    assert list(ratings["annotator"]) == [bob.pk] and list(ratings["verdict"]) == ["incorrect"]
    progress = vetting_progress()
    assert progress["stages"]["primary_reviews"] == 1
    assert next(bar for bar in progress_bars(progress)["stages"] if bar.label == "Primary review").done == 1


def test_a_fixable_reason_still_counts_in_the_agreement_statistics(sample_items, config, reviewer, review):
    config.second_share = 0.0
    config.save()
    review(assignment_next(reviewer=reviewer), "cannot_tell", 3, cannot_tell_reason="excerpt")
    assert list(vetting_ratings()["verdict"]) == ["cannot_tell"]


def test_the_same_outside_field_review_sent_again_is_a_retry(sample_items, config, reviewer, review):
    lease = assignment_next(reviewer=reviewer)
    first = review(lease, "cannot_tell", 3, cannot_tell_reason="outside_field")
    again = review(lease, "cannot_tell", 3, cannot_tell_reason="outside_field")
    assert again.pk == first.pk and Review.objects.count() == 1


def test_changing_a_review_to_outside_the_field_sends_the_item_back(sample_items, config, make_user, review):
    config.second_share = 0.0
    config.save()
    alice, bob = make_user("reviewer"), make_user("reviewer")
    lease = assignment_next(reviewer=alice)
    item = QAItem.objects.get(pk=lease.item_id)
    _only(item)
    review(lease, "correct", 5)
    assert QAItem.objects.get(pk=item.pk).status == ItemStatus.VERIFIED

    answer_edit(
        reviewer=alice, assignment_id=lease.pk, verdict="cannot_tell", relevance=5, cannot_tell_reason="outside_field"
    )

    item.refresh_from_db()
    assert (item.status, item.final_verdict, item.final_source) == (ItemStatus.IMPORTED, "", "")
    assert Review.objects.get(assignment=lease).superseded_at is not None
    assert Assignment.objects.get(pk=lease.pk).status == Assignment.Status.SUPERSEDED
    assert not answer_own(reviewer=alice, assignment_id=lease.pk).editable  # set aside: no further change
    assert assignment_next(reviewer=alice) is None
    assert assignment_next(reviewer=bob).item_id == item.pk


def test_the_page_says_the_item_goes_to_someone_else(client, sample_items, config, reviewer):
    client.force_login(reviewer)
    client.post(reverse("review_next"), {"guidelines_read": "on"})
    lease = Assignment.objects.get(reviewer=reviewer)
    form = {
        "idempotency_key": str(lease.idempotency_key),
        "verdict": "cannot_tell",
        "cannot_tell_reason": "outside_field",
        "relevance": "3",
    }
    response = client.post(reverse("review_assignment", args=[lease.pk]), form, follow=True)
    assert "the item goes to another reviewer, and it will not come back to you" in response.content.decode()
    assert QAItem.objects.get(pk=lease.item_id).status == ItemStatus.IMPORTED
