"""A reviewer changing their own recent review: the one rule, the service (earlier version kept, audited, item routed
again), the pages, and the race with a second reviewer's lease."""

from __future__ import annotations

from functools import partial

import pytest
from django.urls import reverse

from annotation.models import Assignment, QAItem, Review, ReviewRevision
from annotation.services.disputes import dispute_file, feedback_file
from annotation.services.judgement_exports import judgement_rows
from annotation.services.queue import assignment_next
from annotation.services.review_edit import review_edit, reviews_recent_of
from annotation.workflow import EDIT_REFUSED_MESSAGE, EditRefusal, ItemStatus, Stage, review_edit_refusal
from portal.errors import Conflict, NotFound
from portal.models import AuditEntry
from tests.annotation.conftest import share
from tests.concurrency import at_once

pytestmark = pytest.mark.django_db

S = ItemStatus
FREE = {"second_review_assigned": False, "issue_filed": False, "is_gold": False, "in_release": False}


# --- the rule (pure) ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "final_source"),
    [(S.IN_SECOND_REVIEW, ""), (S.VERIFIED, "primary"), (S.REJECTED, "primary")],
)
def test_a_primary_review_nothing_was_built_on_may_be_changed(status, final_source):
    assert review_edit_refusal(stage=Stage.PRIMARY, item_status=status, final_source=final_source, **FREE) == ""


@pytest.mark.parametrize(
    ("stage", "status", "final_source", "facts", "expected"),
    [
        (Stage.SECONDARY, S.VERIFIED, "agreement", {}, EditRefusal.SECOND_STAGE),
        (Stage.SECONDARY, S.IN_ADJUDICATION, "", {}, EditRefusal.SECOND_STAGE),
        (Stage.PRIMARY, S.IN_SECOND_REVIEW, "", {"second_review_assigned": True}, EditRefusal.SECOND_REVIEWER),
        (Stage.PRIMARY, S.IN_ADJUDICATION, "", {}, EditRefusal.ADJUDICATION),
        (Stage.PRIMARY, S.VERIFIED, "adjudication", {}, EditRefusal.ADJUDICATION),
        (Stage.PRIMARY, S.VERIFIED, "agreement", {}, EditRefusal.MOVED_ON),
        (Stage.PRIMARY, S.HELD, "", {}, EditRefusal.ISSUE),
        (Stage.PRIMARY, S.VERIFIED, "primary", {"issue_filed": True}, EditRefusal.ISSUE),
        (Stage.PRIMARY, S.VERIFIED, "primary", {"is_gold": True}, EditRefusal.GOLD),
        (Stage.PRIMARY, S.VERIFIED, "primary", {"in_release": True}, EditRefusal.RELEASE),
    ],
)
def test_a_review_is_refused_once_the_item_moved_on(stage, status, final_source, facts, expected):
    got = review_edit_refusal(stage=stage, item_status=status, final_source=final_source, **(FREE | facts))
    assert got == expected


# --- the service --------------------------------------------------------------------------------------------


def _primary(config, reviewer, review, *, second: float, verdict="correct", relevance=5):
    share(config, second)
    return review(assignment_next(reviewer=reviewer), verdict, relevance, comment="first thought")


def test_changing_a_final_primary_review_keeps_the_earlier_version_audits_and_routes_again(
    sample_items, config, reviewer, review
):
    first = _primary(config, reviewer, review, second=0.0)
    assert QAItem.objects.get(pk=first.item_id).status == S.VERIFIED
    changed = review_edit(reviewer=reviewer, review_id=first.pk, verdict="incorrect", relevance=3, comment="oops")
    assert (changed.verdict, changed.relevance, changed.comment) == ("incorrect", 3, "oops")
    assert changed.edited_at is not None
    item = QAItem.objects.get(pk=first.item_id)
    assert (item.status, item.final_verdict, item.final_relevance, item.final_source) == (
        S.REJECTED,
        "incorrect",
        3.0,
        "primary",
    )
    (earlier,) = ReviewRevision.objects.filter(review=first)
    assert (earlier.version, earlier.verdict, earlier.relevance, earlier.comment) == (1, "correct", 5, "first thought")
    entry = AuditEntry.objects.get(action="review_edited", object_id=str(first.pk))
    assert entry.before["verdict"] == "correct" and entry.after["verdict"] == "incorrect"
    assert entry.actor == reviewer
    # The export answers "what did it say before".
    (row,) = [r for r in judgement_rows() if r["item_uid"] == item.uid]
    assert row["verdict"] == "incorrect" and row["edited_at"]
    assert row["earlier_versions"].startswith("version 1: correct, relevance 5, comment: first thought, replaced ")


def test_changing_twice_keeps_every_version_and_the_same_values_change_nothing(sample_items, config, reviewer, review):
    first = _primary(config, reviewer, review, second=1.0)
    review_edit(reviewer=reviewer, review_id=first.pk, verdict="incorrect", relevance=4)
    review_edit(reviewer=reviewer, review_id=first.pk, verdict="incorrect", relevance=4)  # same: nothing new
    review_edit(reviewer=reviewer, review_id=first.pk, verdict="correct", relevance=2)
    versions = list(ReviewRevision.objects.filter(review=first).values_list("version", "verdict", "relevance"))
    assert versions == [(1, "correct", 5), (2, "incorrect", 4)]
    assert QAItem.objects.get(pk=first.item_id).status == S.IN_SECOND_REVIEW  # still waits for its second review
    assert AuditEntry.objects.filter(action="review_edited").count() == 2


def test_cannot_tell_after_a_change_sends_the_item_to_adjudication_and_locks_the_review(
    sample_items, config, reviewer, review
):
    first = _primary(config, reviewer, review, second=0.0)
    review_edit(reviewer=reviewer, review_id=first.pk, verdict="cannot_tell", relevance=3, cannot_tell_reason="excerpt")
    item = QAItem.objects.get(pk=first.item_id)
    assert item.status == S.IN_ADJUDICATION and item.final_verdict == "" and item.final_source == ""
    with pytest.raises(Conflict) as refused:
        review_edit(reviewer=reviewer, review_id=first.pk, verdict="correct", relevance=3)
    assert refused.value.code == "review_locked"


def test_refused_once_a_second_reviewer_was_given_the_item(sample_items, config, make_user, reviewer, review):
    first = _primary(config, reviewer, review, second=1.0)
    second = assignment_next(reviewer=make_user("reviewer"))
    assert second.item_id == first.item_id and second.stage == Stage.SECONDARY
    with pytest.raises(Conflict) as refused:
        review_edit(reviewer=reviewer, review_id=first.pk, verdict="incorrect", relevance=1)
    assert str(refused.value) == EDIT_REFUSED_MESSAGE  # blinding: the same words for every later step
    assert Review.objects.get(pk=first.pk).verdict == "correct"
    assert not ReviewRevision.objects.exists()


def test_refused_once_a_dispute_or_feedback_note_was_filed(sample_items, config, make_user, reviewer, review):
    first = _primary(config, reviewer, review, second=0.0)
    feedback_file(author=make_user("organizer"), item=first.item, text="Check the units.")
    with pytest.raises(Conflict):
        review_edit(reviewer=reviewer, review_id=first.pk, verdict="incorrect", relevance=1)
    other = review(assignment_next(reviewer=reviewer), "correct", 5)
    dispute_file(raised_by=make_user("organizer"), item=other.item, category="ambiguous", text="Two answers fit.")
    with pytest.raises(Conflict):
        review_edit(reviewer=reviewer, review_id=other.pk, verdict="incorrect", relevance=1)


def test_refused_once_the_item_is_in_a_release(sample_items, config, reviewer, review):
    from annotation.services.releases import release_freeze

    first = _primary(config, reviewer, review, second=0.0)
    release_freeze(name="edit-test")
    with pytest.raises(Conflict):
        review_edit(reviewer=reviewer, review_id=first.pk, verdict="incorrect", relevance=1)


def test_a_second_review_is_never_changed(sample_items, config, make_user, reviewer, review):
    _primary(config, reviewer, review, second=1.0)
    bob = make_user("reviewer")
    second = review(assignment_next(reviewer=bob), "correct", 5)
    with pytest.raises(Conflict):
        review_edit(reviewer=bob, review_id=second.pk, verdict="incorrect", relevance=1)


def test_nobody_changes_or_finds_someone_elses_review(sample_items, config, make_user, reviewer, review):
    first = _primary(config, reviewer, review, second=0.0)
    with pytest.raises(NotFound):
        review_edit(reviewer=make_user("reviewer"), review_id=first.pk, verdict="incorrect", relevance=1)
    assert reviews_recent_of(make_user("reviewer")) == []


def test_recent_reviews_are_the_own_newest_first_with_editability(sample_items, config, make_user, reviewer, review):
    share(config, 1.0)
    done = [review(assignment_next(reviewer=reviewer), "correct", 4) for _ in range(3)]
    assignment_next(reviewer=make_user("reviewer"))  # a second reviewer takes one of them
    recent = reviews_recent_of(reviewer)
    assert [r.review_id for r in recent] == [r.pk for r in reversed(done)]
    assert [r.assignment_id for r in recent] == [r.assignment_id for r in reversed(done)]
    taken = Assignment.objects.get(stage=Stage.SECONDARY).item_id
    assert {r.item.pk: r.editable for r in recent} == {r.item_id: r.item_id != taken for r in done}


# --- pages --------------------------------------------------------------------------------------------------


def test_the_edit_page_changes_the_review_and_lists_the_earlier_version(client, sample_items, config, reviewer, review):
    first = _primary(config, reviewer, review, second=1.0)
    client.force_login(reviewer)
    page = client.get(reverse("review_mine")).content.decode()
    assert first.item.uid in page and reverse("review_edit", args=[first.assignment_id]) in page
    response = client.post(
        reverse("review_edit", args=[first.assignment_id]), {"verdict": "incorrect", "relevance": "2"}
    )
    assert response.status_code == 302
    page = client.get(reverse("review_edit", args=[first.assignment_id])).content.decode()
    assert "Earlier versions" in page and "first thought" in page


def test_the_edit_page_names_the_field_and_changes_nothing_on_bad_input(client, sample_items, config, reviewer, review):
    first = _primary(config, reviewer, review, second=1.0)
    client.force_login(reviewer)
    response = client.post(reverse("review_edit", args=[first.assignment_id]), {"verdict": "maybe", "relevance": "9"})
    assert response.status_code == 400
    assert Review.objects.get(pk=first.pk).verdict == "correct"


def test_the_last_review_link_opens_the_newest_review(client, sample_items, config, reviewer, review):
    share(config, 1.0)
    review(assignment_next(reviewer=reviewer))
    newest = review(assignment_next(reviewer=reviewer))
    client.force_login(reviewer)
    assert client.get(reverse("review_last"))["Location"] == reverse("review_edit", args=[newest.assignment_id])


def test_someone_elses_review_page_is_not_found(client, sample_items, config, make_user, reviewer, review):
    first = _primary(config, reviewer, review, second=1.0)
    client.force_login(make_user("reviewer"))
    response = client.get(reverse("review_edit", args=[first.assignment_id]), follow=True)
    assert first.item.question[:30] not in response.content.decode()
    response = client.post(
        reverse("review_edit", args=[first.assignment_id]), {"verdict": "incorrect", "relevance": "2"}
    )
    assert Review.objects.get(pk=first.pk).verdict == "correct"


# --- the race with a second reviewer ------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_a_change_and_a_second_reviewers_lease_at_the_same_moment_do_not_both_win(
    sample_items, config, make_user, review
):
    share(config, 1.0)
    pairs = []
    for _ in range(6):
        author = make_user("reviewer")
        first = review(assignment_next(reviewer=author), "correct", 5)
        # Only this item waits for a second review, so the second reviewer can only be given this one.
        QAItem.objects.filter(status=S.IN_SECOND_REVIEW).exclude(pk=first.item_id).update(status=S.VERIFIED)
        other = make_user("reviewer")
        edit = partial(review_edit, reviewer=author, review_id=first.pk, verdict="incorrect", relevance=1)
        edited, lease = at_once(edit, partial(assignment_next, reviewer=other))
        stored = Review.objects.get(pk=first.pk)
        if isinstance(edited, Exception):
            assert isinstance(edited, Conflict), edited
            assert lease is not None and lease.item_id == first.item_id  # the lease came first: change refused
            assert stored.verdict == "correct"
        else:
            assert stored.verdict == "incorrect"
            if lease is not None and lease.item_id == first.item_id:
                assert lease.created_at > stored.edited_at  # the lease came after the change, never before
        pairs.append((isinstance(edited, Exception), lease is not None))
        QAItem.objects.filter(pk=first.item_id).update(status=S.VERIFIED)
    assert pairs  # both orders are acceptable; what never happens is a change after the lease
