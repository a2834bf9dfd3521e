"""Paired permutation test, significance clusters and the human ceiling, against hand-computed answers."""

import itertools

import numpy as np
import pytest

from stats.significance import human_ceiling, paired_permutation_test, sign_flips, significance_clusters


def exact_p(diff, denom):
    """Enumerate every sign pattern: the exact one-sided p-value of the sign-flip test."""
    observed = sum(diff) / sum(denom)
    patterns = list(itertools.product((-1, 1), repeat=len(diff)))
    hits = sum(1 for s in patterns if np.dot(s, diff) / sum(denom) >= observed - 1e-12)
    return hits / len(patterns)


def test_permutation_p_value_converges_to_the_exact_enumeration():
    a, b, n = [3, 2, 4, 1], [1, 2, 1, 2], [4, 3, 5, 3]
    diff = np.subtract(a, b)
    res = paired_permutation_test(a, b, n, n_resamples=40000, seed=1)
    assert res.difference == pytest.approx(4 / 15)
    assert res.p_value == pytest.approx(exact_p(diff, n), abs=0.01)  # exact: 3/16


def test_identical_judges_are_never_significant():
    res = paired_permutation_test([2, 3], [2, 3], [3, 3], n_resamples=200)
    assert res.difference == 0.0
    assert res.p_value == 1.0


def test_p_value_is_never_zero_and_seeded():
    a = [5] * 12
    b = [0] * 12
    n = [5] * 12
    r1 = paired_permutation_test(a, b, n, n_resamples=500, seed=4)
    r2 = paired_permutation_test(a, b, n, n_resamples=500, seed=4)
    assert r1 == r2
    assert 0 < r1.p_value < 0.01


def test_draws_made_once_for_many_tests_give_the_same_p_values():
    """A caller testing many pairs of judges on the same questions makes the sign flips once (stats.judges)."""
    rng = np.random.default_rng(1)
    n = rng.integers(1, 6, size=15)
    flips = sign_flips(400, 15, 7)
    for _ in range(3):
        a, b = rng.binomial(n, 0.7), rng.binomial(n, 0.6)
        assert paired_permutation_test(a, b, n, n_resamples=400, seed=7, flips=flips) == paired_permutation_test(
            a, b, n, n_resamples=400, seed=7
        )
    with pytest.raises(ValueError, match="one row per resample"):
        paired_permutation_test(a, b, n, n_resamples=400, seed=7, flips=sign_flips(400, 14, 7))


def test_bad_permutation_inputs():
    with pytest.raises(ValueError):
        paired_permutation_test([1], [1, 2], [1, 1])
    with pytest.raises(ValueError):
        paired_permutation_test([], [], [])


def table(pairs):
    return lambda a, b: pairs[(a, b)]


def test_clusters_split_where_every_upper_judge_beats_every_lower_one():
    scores = {"A": 0.9, "B": 0.8, "C": 0.5, "D": 0.4}
    p = table(
        {
            ("A", "B"): 0.3, ("A", "C"): 0.01, ("A", "D"): 0.01,
            ("B", "C"): 0.02, ("B", "D"): 0.01, ("C", "D"): 0.4,
        }
    )  # fmt: skip
    assert significance_clusters(scores, p) == {"A": 1, "B": 1, "C": 2, "D": 2}


def test_no_split_without_a_significant_difference_for_every_member():
    # A beats C, but B does not: the stricter rule keeps all three together (mt-metrics-eval's greedy rule
    # would start a second cluster at C)
    scores = {"A": 0.9, "B": 0.8, "C": 0.5}
    p = table({("A", "B"): 0.3, ("A", "C"): 0.01, ("B", "C"): 0.2})
    assert significance_clusters(scores, p) == {"A": 1, "B": 1, "C": 1}


def test_every_judge_its_own_cluster_when_all_differ():
    scores = {"x": 0.1, "y": 0.5, "z": 0.3}
    assert significance_clusters(scores, lambda a, b: 0.001) == {"y": 1, "z": 2, "x": 3}


def test_human_ceiling_percentile_and_flag():
    c = human_ceiling([0.6, 0.7, 0.8], 0.7)
    assert (c.mean, c.low, c.high) == pytest.approx((0.7, 0.6, 0.8))
    assert c.percentile == pytest.approx(50.0)  # above one, tied with one (half), below one
    assert not c.above_ceiling
    top = human_ceiling([0.6, 0.7, 0.8], 0.85)
    assert top.percentile == 100.0 and top.above_ceiling
    assert human_ceiling([0.6, None, 0.8], 0.5).n_physicians == 2
    with pytest.raises(ValueError):
        human_ceiling([], 0.5)
