"""Submitting reviews: idempotence, routing after primary / secondary review, audit history."""

from __future__ import annotations

import pytest

from annotation.models import Assignment, QAItem, Review
from annotation.services.queue import assignment_next
from annotation.services.review import review_submit
from annotation.services.transitions import item_transition
from annotation.workflow import ItemStatus
from portal.errors import Conflict, DomainError, NotAllowed
from portal.models import AuditEntry

pytestmark = pytest.mark.django_db


def test_submit_is_idempotent_for_a_double_post(sample_items, config, reviewer, review):
    config.second_share = 0.0
    config.save()
    assignment = assignment_next(reviewer=reviewer)
    first = review(assignment, "correct", 5, comment="fine")
    again = review(assignment, "correct", 5, comment="fine")
    assert again.pk == first.pk and again.verdict == "correct"
    with pytest.raises(Conflict):  # a different review is not a double POST (tests/annotation/test_review_resend.py)
        review(assignment, "incorrect", 1, comment="changed my mind")
    assert Review.objects.count() == 1


def test_submit_with_another_leases_key_is_refused(sample_items, config, reviewer):
    assignment = assignment_next(reviewer=reviewer)
    with pytest.raises(Conflict):
        review_submit(
            assignment_id=assignment.pk,
            reviewer=reviewer,
            idempotency_key="00000000-0000-0000-0000-000000000000",
            verdict="correct",
            relevance=5,
        )


def test_submit_on_someone_elses_assignment_is_refused(sample_items, config, make_user):
    assignment = assignment_next(reviewer=make_user("reviewer"))
    with pytest.raises(NotAllowed):
        review_submit(
            assignment_id=assignment.pk,
            reviewer=make_user("reviewer"),
            idempotency_key=assignment.idempotency_key,
            verdict="correct",
            relevance=5,
        )


@pytest.mark.parametrize(("verdict", "relevance"), [("maybe", 3), ("correct", 0), ("correct", 6), ("correct", "x")])
def test_bad_verdict_or_relevance_is_refused(sample_items, config, reviewer, review, verdict, relevance):
    assignment = assignment_next(reviewer=reviewer)
    with pytest.raises(DomainError):
        review(assignment, verdict, relevance)


def test_item_not_drawn_for_second_review_takes_the_primary_review_as_final(sample_items, config, reviewer, review):
    config.second_share = 0.0
    config.save()
    assignment = assignment_next(reviewer=reviewer)
    review(assignment, "correct", 5)
    item = QAItem.objects.get(pk=assignment.item_id)
    assert (item.status, item.final_verdict, item.final_relevance, item.final_source) == (
        "verified",
        "correct",
        5.0,
        "primary",
    )
    assert item.second_review is False
    a2 = assignment_next(reviewer=reviewer)
    review(a2, "incorrect", 3)
    assert QAItem.objects.get(pk=a2.item_id).status == ItemStatus.REJECTED


def _double(config, make_user, review, first, second, gap=2):
    config.second_share, config.relevance_gap = 1.0, gap
    config.save()
    a = assignment_next(reviewer=make_user("reviewer"))
    review(a, *first)
    b = assignment_next(reviewer=make_user("reviewer"))
    assert b.item_id == a.item_id
    review(b, *second)
    return QAItem.objects.get(pk=a.item_id)


def test_agreeing_reviews_verify_the_item_with_mean_relevance(sample_items, config, make_user, review):
    item = _double(config, make_user, review, ("correct", 5), ("correct", 4))
    assert (item.status, item.final_verdict, item.final_relevance, item.final_source) == (
        "verified",
        "correct",
        4.5,
        "agreement",
    )


def test_verdict_disagreement_goes_to_adjudication(sample_items, config, make_user, review):
    item = _double(config, make_user, review, ("correct", 5), ("incorrect", 5))
    assert item.status == ItemStatus.IN_ADJUDICATION and item.final_verdict == ""


def test_relevance_gap_at_the_threshold_goes_to_adjudication(sample_items, config, make_user, review):
    item = _double(config, make_user, review, ("correct", 5), ("correct", 3), gap=2)
    assert item.status == ItemStatus.IN_ADJUDICATION


def test_relevance_gap_below_the_threshold_agrees(sample_items, config, make_user, review):
    item = _double(config, make_user, review, ("correct", 5), ("correct", 3), gap=3)
    assert item.status == ItemStatus.VERIFIED and item.final_relevance == 4.0


def test_every_step_leaves_an_audit_entry(sample_items, config, make_user, review):
    item = _double(config, make_user, review, ("correct", 5), ("correct", 5))
    actions = list(
        AuditEntry.objects.filter(object_type="annotation.qaitem", object_id=str(item.pk)).values_list(
            "action", flat=True
        )
    )
    assert actions == [
        "item_assign",
        "item_submit_primary",
        "item_route_second",
        "item_assign_secondary",
        "item_submit_agree",
        "item_final_verify",
    ]
    entry = AuditEntry.objects.get(object_id=str(item.pk), action="item_final_verify")
    assert entry.before["status"] == "agreed" and entry.after["status"] == "verified" and entry.actor_id
    assert AuditEntry.objects.filter(object_type="annotation.review", action="review_created").count() == 2


def test_item_transition_refuses_an_illegal_move(sample_items, reviewer):
    with pytest.raises(Conflict):
        item_transition(item=sample_items[0], action="final_verify", actor=reviewer)
    assert QAItem.objects.get(pk=sample_items[0].pk).status == ItemStatus.IMPORTED


def test_time_spent_is_recorded_from_the_server_and_the_page(sample_items, config, reviewer, review):
    assignment = assignment_next(reviewer=reviewer)
    stored = review(assignment, "correct", 4, active_seconds=42.5)
    assert stored.server_seconds >= 0 and stored.active_seconds == 42.5
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.SUBMITTED


def test_moves_in_a_row_are_checked_in_turn_written_once_and_audited_each(sample_items, reviewer):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.services.transitions import Move, item_moves

    item = sample_items[0]
    item_transition(item=item, action="assign", actor=reviewer)
    moves = [Move("submit_primary", note="first", fields={"second_review": True}), Move("route_second", note="then")]
    with CaptureQueriesContext(connection) as queries:
        item_moves(item=item, moves=moves, actor=reviewer)
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].startswith('UPDATE "annotation_qaitem"')]
    assert len(updates) == 1
    stored = QAItem.objects.get(pk=item.pk)
    assert stored.status == ItemStatus.IN_SECOND_REVIEW and stored.second_review is True
    entries = AuditEntry.objects.filter(object_id=str(item.pk), action__in=["item_submit_primary", "item_route_second"])
    assert [(e.before["status"], e.after["status"], e.note) for e in entries] == [
        ("in_review", "reviewed", "first"),
        ("reviewed", "in_second_review", "then"),
    ]


def test_if_one_move_of_a_row_is_refused_none_is_written(sample_items, reviewer):
    from annotation.services.transitions import Move, item_moves

    item = sample_items[0]
    item_transition(item=item, action="assign", actor=reviewer)
    audited = AuditEntry.objects.count()
    with pytest.raises(Conflict):
        item_moves(item=item, moves=[Move("submit_primary"), Move("final_verify")], actor=reviewer)
    assert QAItem.objects.get(pk=item.pk).status == ItemStatus.IN_REVIEW
    assert AuditEntry.objects.count() == audited


def test_a_primary_review_writes_the_item_once_and_its_audit_in_one_statement(sample_items, config, reviewer):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    config.second_share = 0.0
    config.save()
    assignment = assignment_next(reviewer=reviewer)
    with CaptureQueriesContext(connection) as queries:
        review_submit(
            assignment_id=assignment.pk,
            reviewer=reviewer,
            idempotency_key=assignment.idempotency_key,
            verdict="correct",
            relevance=5,
        )
    round_trips = [q["sql"] for q in queries.captured_queries]
    statements = [s.strip() for sql in round_trips for s in sql.split(";\n")]
    assert sum(s.startswith('UPDATE "annotation_qaitem"') for s in statements) == 1
    assert sum(s.startswith('INSERT INTO "portal_auditentry"') for s in statements) == 1
    # The writes nothing reads back (the lease's end, the draft, the item's move, the audit) share one round trip.
    (together,) = [sql for sql in round_trips if 'UPDATE "annotation_qaitem"' in sql]
    for write in ('UPDATE "annotation_assignment"', 'DELETE FROM "annotation_reviewdraft"', "portal_auditentry"):
        assert write in together
    actions = AuditEntry.objects.filter(at__gte=assignment.created_at).values_list("action", flat=True)
    assert list(actions)[-3:] == ["review_created", "item_submit_primary", "item_route_verify"]
