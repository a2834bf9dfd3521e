"""The second-review allocation rule (pure): Bayes on the first verdict, the choice per policy, and the threshold
that keeps the adaptive rule within the uniform rule's judgements."""

from __future__ import annotations

import numpy as np
import pytest

from annotation.second_review import (
    ADJUDICATE_ABOVE,
    Choice,
    Policy,
    Reason,
    adaptive_threshold,
    choose,
    decision_error,
    disagreement_chance,
    reader_confusion,
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
        ({"policy": Policy.UNIFORM, "uniform_draw": True, "share_draw": False, "error": 0.9, "threshold": 0.1},
         Choice(False)),
        ({"policy": Policy.UNIFORM, "uniform_draw": False, "share_draw": True, "error": 0.0, "threshold": 0.1},
         Choice(True, reason=Reason.UNIFORM)),
        # adaptive: the uniform slice always, whatever the model says
        ({"policy": Policy.ADAPTIVE, "uniform_draw": True, "share_draw": False, "error": 0.0, "threshold": 0.1},
         Choice(True, reason=Reason.UNIFORM)),
        # a reviewer the model does not know: the uniform rule's share
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": True, "error": None, "threshold": 0.1},
         Choice(True, reason=Reason.NO_MODEL)),
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": False, "error": None, "threshold": 0.1},
         Choice(False)),
        # more likely wrong than right: straight to an adjudicator
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": False, "error": ADJUDICATE_ABOVE,
          "threshold": 0.1}, Choice(False, straight_to_adjudication=True, reason=Reason.ADJUDICATION)),
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": False, "error": 0.2, "threshold": 0.1},
         Choice(True, reason=Reason.MODEL)),
        # decisive: no second reading (early stop)
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": True, "error": 0.05, "threshold": 0.1},
         Choice(False)),
        ({"policy": Policy.ADAPTIVE, "uniform_draw": False, "share_draw": True, "error": 0.3,
          "threshold": float("inf")}, Choice(False)),
    ],
)  # fmt: skip
def test_the_choice_after_a_primary_review(kwargs, expected):
    assert choose(**kwargs) == expected


def test_the_threshold_spends_no_more_than_the_uniform_rule():
    rng = np.random.default_rng(3)
    errors = rng.beta(0.5, 6, size=2000)
    disagreements = np.clip(errors * 1.5 + 0.05, 0, 1)
    second, uniform = 0.45, 0.1
    threshold = adaptive_threshold(errors, disagreements, second_share=second, uniform_share=uniform)
    referred = errors >= ADJUDICATE_ABOVE
    chosen = (errors >= threshold) & ~referred
    mean_disagreement = disagreements.mean()
    uniform_cost = second * (1 + mean_disagreement)
    adaptive_cost = uniform * (1 + mean_disagreement) + (1 - uniform) * (
        referred.mean() + (1 + disagreements[chosen]).sum() / len(errors)
    )
    assert adaptive_cost <= uniform_cost + 1e-12
    # and it spends the budget: one more item would go over
    lower = errors[~referred & ~chosen].max()
    one_more = adaptive_cost + (1 - uniform) * (1 + disagreements[errors == lower][0]) / len(errors)
    assert one_more > uniform_cost
    assert 0 < threshold < ADJUDICATE_ABOVE


def test_no_budget_beyond_the_slice_reads_only_the_slice_twice():
    assert adaptive_threshold(np.array([0.1, 0.2]), np.array([0.1, 0.1]), second_share=0.1, uniform_share=0.1) == float(
        "inf"
    )
    assert adaptive_threshold(np.array([]), np.array([]), second_share=0.45, uniform_share=0.1) == float("inf")
