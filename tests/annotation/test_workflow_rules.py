"""The status machine and decision rules, tested without a database."""

from __future__ import annotations

import pytest

from annotation.workflow import (
    TRANSITIONS,
    Action,
    IllegalTransition,
    ItemStatus,
    Verdict,
    needs_adjudication,
    next_status,
    route_after_primary,
    route_after_secondary,
    second_review_selected,
)

S, A = ItemStatus, Action


@pytest.mark.parametrize(
    ("state", "action", "target"),
    [
        (S.IMPORTED, A.ASSIGN, S.IN_REVIEW),
        (S.IN_REVIEW, A.SUBMIT_PRIMARY, S.REVIEWED),
        (S.REVIEWED, A.ROUTE_SECOND, S.IN_SECOND_REVIEW),
        (S.REVIEWED, A.ROUTE_VERIFY, S.VERIFIED),
        (S.IN_SECOND_REVIEW, A.SUBMIT_DISAGREE, S.IN_ADJUDICATION),
        (S.AGREED, A.FINAL_VERIFY, S.VERIFIED),
        (S.IN_ADJUDICATION, A.ADJUDICATE_REJECT, S.REJECTED),
        (S.VERIFIED, A.HOLD, S.HELD),
        (S.HELD, A.ADJUDICATE_VERIFY, S.VERIFIED),
        (S.REVIEWED, A.RETURN_TO_QUEUE, S.IMPORTED),
        (S.IN_SECOND_REVIEW, A.RETURN_TO_QUEUE, S.IN_SECOND_REVIEW),
    ],
)
def test_allowed_moves_reach_their_target(state, action, target):
    assert next_status(state, action) == target


@pytest.mark.parametrize(
    ("state", "action"),
    [
        (S.IMPORTED, A.SUBMIT_PRIMARY),
        (S.VERIFIED, A.ASSIGN),
        (S.REJECTED, A.ADJUDICATE_VERIFY),
        (S.HELD, A.HOLD),
        (S.IN_REVIEW, A.FINAL_VERIFY),
        (S.IMPORTED, "fly"),
        (S.IN_REVIEW, A.RETURN_TO_QUEUE),
        (S.IN_ADJUDICATION, A.RETURN_TO_QUEUE),
        (S.VERIFIED, A.RETURN_TO_QUEUE),
    ],
)
def test_illegal_moves_are_refused(state, action):
    with pytest.raises(IllegalTransition):
        next_status(state, action)


def test_every_table_target_is_a_known_state():
    for (state, action), target in TRANSITIONS.items():
        assert state in S.values and action in A.values and (target == "" or target in S.values)


@pytest.mark.parametrize(
    ("held_from", "back"),
    [
        (S.IN_REVIEW, S.IMPORTED),
        (S.IMPORTED, S.IMPORTED),
        (S.IN_SECOND_REVIEW, S.IN_SECOND_REVIEW),
        (S.VERIFIED, S.VERIFIED),
        (S.IN_ADJUDICATION, S.IN_ADJUDICATION),
    ],
)
def test_released_hold_returns_to_where_the_item_was(held_from, back):
    assert next_status(S.HELD, A.RELEASE_HOLD, held_from=held_from) == back


def test_second_review_draw_is_stable_per_item_and_close_to_the_share():
    uids = [f"item-{i}" for i in range(4000)]
    drawn = [second_review_selected(seed="s", uid=u, share=0.45) for u in uids]
    assert drawn == [second_review_selected(seed="s", uid=u, share=0.45) for u in uids]
    assert 0.42 < sum(drawn) / len(drawn) < 0.48
    assert drawn != [second_review_selected(seed="other", uid=u, share=0.45) for u in uids]
    assert not any(second_review_selected(seed="s", uid=u, share=0.0) for u in uids)


@pytest.mark.parametrize(
    ("first", "second", "gap", "expected"),
    [
        (("correct", 5), ("correct", 4), 2, False),
        (("correct", 5), ("correct", 3), 2, True),
        (("correct", 5), ("correct", 4), 1, True),
        (("correct", 5), ("incorrect", 5), 2, True),
        (("cannot_tell", 3), ("cannot_tell", 3), 2, False),
    ],
)
def test_disagreement_thresholds(first, second, gap, expected):
    assert needs_adjudication(first=first, second=second, relevance_gap=gap) is expected


def test_unselected_primary_review_is_final_and_cannot_tell_goes_to_adjudication():
    route = route_after_primary(verdict=Verdict.CORRECT, relevance=5, selected=False)
    assert (route.action, route.final_verdict, route.final_relevance, route.final_source) == (
        A.ROUTE_VERIFY,
        "correct",
        5.0,
        "primary",
    )
    assert route_after_primary(verdict=Verdict.INCORRECT, relevance=2, selected=False).action == A.ROUTE_REJECT
    assert route_after_primary(verdict=Verdict.CANNOT_TELL, relevance=2, selected=False).action == A.ROUTE_ADJUDICATE
    assert route_after_primary(verdict=Verdict.CORRECT, relevance=5, selected=True).final_source == ""


def test_agreement_takes_the_mean_relevance():
    routes = route_after_secondary(first=("correct", 5), second=("correct", 4), relevance_gap=2)
    assert [r.action for r in routes] == [A.SUBMIT_AGREE, A.FINAL_VERIFY]
    assert routes[-1].final_relevance == 4.5 and routes[-1].final_source == "agreement"


def test_adjudicable_states_are_the_states_an_adjudication_may_leave():
    from annotation.workflow import ADJUDICABLE_STATES, TRANSITIONS, Action, ItemStatus

    assert ADJUDICABLE_STATES == {ItemStatus.IN_ADJUDICATION, ItemStatus.HELD}
    for state in ItemStatus:
        leaves = (state, Action.ADJUDICATE_VERIFY) in TRANSITIONS
        assert leaves == (state in ADJUDICABLE_STATES)


def test_the_relevance_scale_and_the_verdicts_are_defined_once():
    from analytics.selectors import RELEVANCE_SCALE, VERDICT_SCALE
    from annotation.models.review import RELEVANCE_CHOICES
    from annotation.workflow import RELEVANCE_MAX, RELEVANCE_MIN, Verdict
    from annotation.workflow import RELEVANCE_SCALE as SCALE

    assert (RELEVANCE_MIN, RELEVANCE_MAX) == (1, 5) and RELEVANCE_SCALE == list(SCALE)
    assert [value for value, _ in RELEVANCE_CHOICES] == list(SCALE)
    assert VERDICT_SCALE == ["correct", "incorrect", "cannot_tell"] == list(Verdict.values)
