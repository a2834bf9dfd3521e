"""Tie-aware agreement and tie calibration: the published test vector of mt-metrics-eval, scipy, brute force."""

import numpy as np
import pytest
from scipy.stats import kendalltau

from stats.ties import count_pairs, kendall_variants, pair_signs, tie_calibration, tie_calibration_held_out

HUMAN = [1, 2, 2, 3, 4]
JUDGE = [2, 1, 1.5, 5, 3]


def test_published_vector():
    # Deutsch, Foster & Freitag (2023) / mt-metrics-eval's stats_test.py
    v = kendall_variants(HUMAN, JUDGE)
    assert v["tau_b"] == pytest.approx(0.3162, abs=1e-4)
    assert v["tau_c"] == pytest.approx(0.32)
    assert v["tau_eq"] == pytest.approx(0.2)
    assert v["acc_eq"] == pytest.approx(0.6)
    assert kendall_variants(HUMAN, JUDGE, epsilon=2)["acc_eq"] == pytest.approx(0.4)


def test_published_tie_calibration():
    signs, diffs = pair_signs(np.array(HUMAN), np.array(JUDGE))
    cal = tie_calibration(signs, diffs)
    assert cal.acc_eq == pytest.approx(0.7)
    assert cal.epsilon == pytest.approx(0.5)  # the smallest threshold that reaches it
    assert cal.acc_eq_at_zero == pytest.approx(0.6)
    assert cal.n_pairs == 10


def test_pair_counts_by_hand():
    signs, diffs = pair_signs(np.array(HUMAN), np.array(JUDGE))
    c = count_pairs(signs, diffs)
    assert (c.concordant, c.discordant, c.human_ties, c.judge_ties, c.both_ties) == (6, 3, 1, 0, 0)
    c = count_pairs(signs, diffs, 2.0)
    assert (c.concordant, c.discordant, c.human_ties, c.judge_ties, c.both_ties) == (3, 0, 0, 6, 1)


def test_tau_b_and_c_match_scipy():
    rng = np.random.default_rng(3)
    for _ in range(50):
        h = rng.integers(0, 4, 9).astype(float)
        j = rng.integers(0, 5, 9).astype(float)
        if np.ptp(h) == 0 or np.ptp(j) == 0:
            continue
        v = kendall_variants(h, j)
        assert v["tau_b"] == pytest.approx(kendalltau(h, j, variant="b").statistic)
        assert v["tau_c"] == pytest.approx(kendalltau(h, j, variant="c").statistic)


def test_undefined_when_everything_ties():
    v = kendall_variants([1, 1, 1], [1, 2, 3])
    assert v["tau_b"] is None and v["tau_c"] is None
    assert v["acc_eq"] == 0.0


def test_calibration_is_the_brute_force_optimum():
    rng = np.random.default_rng(7)
    for _ in range(30):
        signs = rng.integers(-1, 2, 40).astype(float)
        diffs = np.round(rng.normal(size=40), 1)
        cal = tie_calibration(signs, diffs)
        candidates = np.r_[0.0, np.unique(np.abs(diffs))]
        accs = [count_pairs(signs, diffs, e).acc_eq for e in candidates]
        assert cal.acc_eq == pytest.approx(max(accs))
        assert cal.epsilon == pytest.approx(candidates[int(np.argmax(accs))])


def test_negative_epsilon_refused():
    with pytest.raises(ValueError):
        count_pairs([1.0], [0.5], -0.1)


def test_held_out_calibration_scores_each_half_with_the_other_halfs_threshold():
    # question q1: every pair a human tie with small judge differences -> its best epsilon is 0.3;
    # question q2: every pair ordered, judge agrees with differences 0.2 -> its best epsilon is 0.
    signs = np.array([0, 0, 1, 1], dtype=float)
    diffs = np.array([0.3, -0.3, 0.2, 0.2])
    groups = ["q1", "q1", "q2", "q2"]
    held = tie_calibration_held_out(signs, diffs, groups, seed=0)
    # calibrated on q1 (eps 0.3) and applied to q2: 0.2 <= 0.3 makes q2's pairs ties -> 0 of 2 correct;
    # calibrated on q2 (eps 0) and applied to q1: no ties predicted -> 0 of 2 correct.
    assert held.acc_eq == 0.0
    assert sorted(held.epsilons) == [0.0, 0.3]
    # on all the data a threshold of 0.3 looks perfect on q1 but loses q2: the in-sample optimum is optimistic
    assert tie_calibration(signs, diffs).acc_eq == 0.5
    assert tie_calibration_held_out(signs, diffs, ["q1"] * 4) is None
