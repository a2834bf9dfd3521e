"""The second-review allocation rule (pure): Bayes on the first verdict, the choice per policy, and the threshold
that keeps the adaptive rule within the uniform rule's judgements."""

from __future__ import annotations

import numpy as np
import pytest

from annotation.second_review import (
    DEFAULT_ADJUDICATE_ABOVE,
    EXCLUSION_WEIGHT,
    SPEND_SHARE,
    Choice,
    Policy,
    Reason,
    Threshold,
    adaptive_threshold,
    choose,
    decision_error,
    disagreement_chance,
    reader_confusion,
    release_risk,
)

PRIOR = {"correct": 0.8, "incorrect": 0.2, "cannot_tell": 0.0}
CAREFUL = {
    "correct": {"correct": 0.95, "incorrect": 0.05, "cannot_tell": 0.0},
    "incorrect": {"correct": 0.1, "incorrect": 0.9, "cannot_tell": 0.0},
    "cannot_tell": {"correct": 0.0, "incorrect": 0.0, "cannot_tell": 0.0},
}
CARELESS = {
    "correct": {"correct": 0.9, "incorrect": 0.1, "cannot_tell": 0.0},
    "incorrect": {"correct": 0.6, "incorrect": 0.4, "cannot_tell": 0.0},
    "cannot_tell": {"correct": 0.0, "incorrect": 0.0, "cannot_tell": 0.0},
}


def test_the_chance_a_first_verdict_is_wrong_is_bayes_on_the_type_and_the_reviewer():
    # careful "correct": 0.2·0.1 / (0.8·0.95 + 0.2·0.1) = 0.02 / 0.78
    assert decision_error("correct", PRIOR, CAREFUL) == pytest.approx(0.02 / 0.78)
    # careless "correct": 0.2·0.6 / (0.8·0.9 + 0.2·0.6) = 0.12 / 0.84
    assert decision_error("correct", PRIOR, CARELESS) == pytest.approx(0.12 / 0.84)
    # careless "incorrect": 0.8·0.1 / (0.8·0.1 + 0.2·0.4) = 0.5: as likely wrong as right
    assert decision_error("incorrect", PRIOR, CARELESS) == pytest.approx(0.5)
    # a verdict the reviewer never gave cannot be read
    assert decision_error("cannot_tell", PRIOR, CAREFUL) == 1.0


def test_a_second_reviewer_disagrees_as_often_as_the_truths_and_their_reading_say():
    # first careless "correct": truth correct 0.72/0.84, incorrect 0.12/0.84; a careful second says correct with
    # 0.95 and 0.1: disagreement = 1 − (0.72·0.95 + 0.12·0.1) / 0.84
    expected = 1 - (0.72 * 0.95 + 0.12 * 0.1) / 0.84
    assert disagreement_chance("correct", PRIOR, CARELESS, CAREFUL) == pytest.approx(expected)


def test_the_type_confusion_is_used_once_it_rests_on_enough_labels():
    assert reader_confusion((50, CAREFUL), (25, CARELESS)) is CARELESS
    assert reader_confusion((50, CAREFUL), (5, CARELESS)) is CAREFUL
    assert reader_confusion((3, CAREFUL), None) is None
    assert reader_confusion(None, None) is None


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        # the uniform rule: the share draw alone
        ({"policy": Policy.UNIFORM, "uniform_draw": True, "share_draw": False, "first": "correct", "error": 0.9, "threshold": 0.1},
         Choice(False)),
        ({"policy": Policy.UNIFORM, "uniform_draw": False, "share_draw": True, "first": "correct", "error": 0.0, "threshold": 0.1},
         Choice(True, reason=Reason.UNIFORM)),
        # adaptive: the uniform slice always, whatever the model says
        ({"policy": Policy.ADAPTIVE, "uniform_draw": True, "share_draw": False, "first": "correct", "error": 0.0, "threshold": 0.1},
         Choice(True, reason=Reason.UNIFORM)),
        # a reviewer the model does not know: the uniform rule's share
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": True, "first": "correct", "error": None, "threshold": 0.1},
         Choice(True, reason=Reason.NO_MODEL)),
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": False, "first": "correct", "error": None, "threshold": 0.1},
         Choice(False)),
        # picked: straight to an adjudicator from adjudicate_above on, else a second reviewer
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": False, "first": "correct", "error": 0.5,
          "threshold": 0.1, "adjudicate_above": 0.5}, Choice(False, straight_to_adjudication=True, reason=Reason.ADJUDICATION)),
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": False, "first": "correct", "error": 0.2, "threshold": 0.1,
          "adjudicate_above": 0.5}, Choice(True, reason=Reason.MODEL)),
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": False, "first": "correct", "error": 0.2, "threshold": 0.1},
         Choice(False, straight_to_adjudication=True, reason=Reason.ADJUDICATION)),  # by default, every picked item
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": False, "first": "correct", "error": 0.9, "threshold": 0.1,
          "adjudicate_above": 1.0}, Choice(True, reason=Reason.MODEL)),  # 1: second reviewers read them all
        # an "incorrect" as likely wrong counts for less: it can only keep a good item out of the release
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": True, "first": "incorrect", "error": 0.3,
          "threshold": 0.1}, Choice(False)),
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": False, "first": "incorrect", "error": 0.6,
          "threshold": 0.05, "adjudicate_above": 0.5}, Choice(False, straight_to_adjudication=True, reason=Reason.ADJUDICATION)),
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": False, "first": "incorrect", "error": 0.6,
          "threshold": 0.2}, Choice(False)),
        # decisive: no second reading (early stop)
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": True, "first": "correct", "error": 0.05, "threshold": 0.1},
         Choice(False)),
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": True, "first": "correct", "error": 0.3,
          "threshold": float("inf")}, Choice(False)),
    ],
)  # fmt: skip
def test_the_choice_after_a_primary_review(kwargs, expected):
    assert choose(**kwargs) == expected


def test_a_verdict_that_lets_an_item_in_risks_all_of_its_error_one_that_keeps_it_out_a_share():
    assert release_risk("correct", 0.3) == 0.3
    assert release_risk("incorrect", 0.3) == pytest.approx(EXCLUSION_WEIGHT * 0.3)
    assert release_risk("cannot_tell", 1.0) == pytest.approx(EXCLUSION_WEIGHT)
    assert 0 < EXCLUSION_WEIGHT < 1


def _spent(risks, errors, disagreements, chosen, second, uniform, adjudicate_above):
    mean_disagreement = disagreements.mean()
    each = np.where(errors >= adjudicate_above, 1.0, 1.0 + disagreements)
    return uniform * (1 + mean_disagreement) + (1 - uniform) * each[chosen].sum() / len(risks), second * (
        1 + mean_disagreement
    ) * SPEND_SHARE


def _chosen(risks, threshold: Threshold, draws):
    return (risks > threshold.value) | ((risks == threshold.value) & (draws < threshold.tie_share))


@pytest.mark.parametrize("adjudicate_above", [0.5, DEFAULT_ADJUDICATE_ABOVE, 1.0])
def test_the_threshold_spends_the_uniform_rule_s_budget_and_no_more(adjudicate_above):
    rng = np.random.default_rng(3)
    n = 20_000
    # reviewers' verdicts read alike: 60 kinds of (reader, verdict) risk, so the budget ends inside a tie
    kinds = rng.beta(0.5, 4, size=60)
    kinds[0] = 0.7  # a reader more often wrong than right: straight to adjudication
    errors = kinds[rng.integers(0, 60, size=n)]
    firsts = np.where(rng.random(n) < 0.3, "incorrect", "correct")
    risks = np.array([release_risk(first, error) for first, error in zip(firsts, errors, strict=True)])
    disagreements = np.clip(errors * 1.5 + 0.05, 0, 1)
    second, uniform = 0.45, 0.1
    threshold = adaptive_threshold(
        risks, errors, disagreements, second_share=second, uniform_share=uniform, adjudicate_above=adjudicate_above
    )
    assert 0 < threshold.tie_share < 1
    chosen = _chosen(risks, threshold, rng.random(n))
    adaptive_cost, uniform_cost = _spent(risks, errors, disagreements, chosen, second, uniform, adjudicate_above)
    # within the budget up to the randomness of the tie's draw (one judgement in a thousand)
    assert adaptive_cost == pytest.approx(uniform_cost, rel=2e-3)
    # the riskiest items are taken first
    assert risks[chosen].min() >= risks[~chosen].max()
    assert (firsts[chosen] == "incorrect").any()
    assert (errors[chosen] >= adjudicate_above).any() == (adjudicate_above < 1)


def test_straight_referrals_read_more_items_for_the_same_budget():
    rng = np.random.default_rng(4)
    errors = rng.beta(0.5, 4, size=5000)
    risks, disagreements = errors, np.clip(errors * 1.5 + 0.05, 0, 1)
    picked = {
        above: int((risks > adaptive_threshold(risks, errors, disagreements, second_share=0.45, uniform_share=0.1,
                                               adjudicate_above=above).value).sum())
        for above in (0.0, 1.0)
    }  # fmt: skip
    # a referral costs 1 judgement, a second review 1 + its chance of disagreement: more items read at 0
    assert picked[0.0] > picked[1.0] * 1.05


def test_the_tie_at_the_edge_of_the_budget_is_drawn_in_the_share_that_fits():
    """Forty items share one reader's risk; 22 of them fit the budget."""
    risks = np.array([0.5] * 10 + [0.2] * 40 + [0.1] * 50)
    errors = np.minimum(risks, 0.4)
    disagreements = np.zeros(100)  # a second review costs 1, as a referral does: the same count either way
    second = (0.3 + 0.1 * 0.9) / SPEND_SHARE  # planned: 0.39 per item
    threshold = adaptive_threshold(risks, errors, disagreements, second_share=second, uniform_share=0.1)
    # the budget is (0.39 - 0.1) = 0.29 per item; each chosen item costs 0.9 / 100: 32 items fit, the ten at 0.5 and
    # 22 of the 40 at 0.2
    assert threshold == Threshold(0.2, 22 / 40)


@pytest.mark.parametrize(("tie_draw", "expected"), [(True, Choice(True, reason=Reason.MODEL)), (False, Choice(False))])
def test_an_item_at_the_threshold_is_read_twice_when_drawn(tie_draw, expected):
    kwargs = {"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": False, "first": "correct"}
    kwargs["adjudicate_above"] = 1.0  # read by a second reviewer when picked
    assert choose(**kwargs, error=0.2, threshold=0.2, tie_draw=tie_draw) == expected
    assert choose(**kwargs, error=0.21, threshold=0.2, tie_draw=False) == Choice(True, reason=Reason.MODEL)


def test_no_budget_beyond_the_slice_reads_only_the_slice_twice_and_a_large_one_reads_all():
    one = np.array([0.1, 0.2])
    assert adaptive_threshold(one, one, np.array([0.1, 0.1]), second_share=0.1, uniform_share=0.1) == Threshold(0.2)
    assert adaptive_threshold(one, one, np.zeros(2), second_share=2.0, uniform_share=0.1) == Threshold(-float("inf"))
    none = np.array([])
    assert adaptive_threshold(none, none, none, second_share=0.45, uniform_share=0.1) == Threshold(-float("inf"))
