"""stats.ppi: every figure is ppi-python 0.2.3's (run here as the reference) on hand-built and simulated data, the
decisions where ppi-python gives no number, and the coverage of the 95 % interval in seeded repetitions."""

from __future__ import annotations

import math

import numpy as np
import ppi_py
import pytest
from scipy.stats import norm

from stats.ppi import (
    PREDICTION_COST,
    cheapest_pair,
    classical_mean_ci,
    labels_needed,
    power_tuning_lambda,
    ppi_correlation,
    ppi_mean_ci,
)

TOL = 1e-9

# ppi-python warns where the target cannot be reached with the items there are (and answers n_max, as tested)
pytestmark = pytest.mark.filterwarnings("ignore:The desired effective sample size:UserWarning")


def reference(y, yhat, yhat_unlabeled, alpha, w=None, w_unlabeled=None) -> dict:
    """ppi-python's estimate, interval and λ. The estimate is linear in λ, so λ is read off the estimates at
    λ = 0 and λ = 1."""
    kwargs = {"w": w, "w_unlabeled": w_unlabeled}
    low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=alpha, **kwargs)
    mean = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_unlabeled, **kwargs)[0]
    at_0 = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_unlabeled, lam=0, **kwargs)[0]
    at_1 = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_unlabeled, lam=1, **kwargs)[0]
    return {"mean": mean, "low": low[0], "high": high[0], "lam": (mean - at_0) / (at_1 - at_0)}


def assert_matches_reference(y, yhat, yhat_unlabeled, alpha=0.05, w=None, w_unlabeled=None):
    got = ppi_mean_ci(y, yhat, yhat_unlabeled, alpha, w=w, w_unlabeled=w_unlabeled)
    expected = reference(y, yhat, yhat_unlabeled, alpha, w, w_unlabeled)
    assert got.mean == pytest.approx(expected["mean"], abs=TOL)
    assert got.low == pytest.approx(expected["low"], abs=TOL)
    assert got.high == pytest.approx(expected["high"], abs=TOL)
    assert got.lam == pytest.approx(expected["lam"], abs=1e-7)
    return got


def simulated(kind: str, seed: int, n: int = 200, big_n: int = 2000):
    """Physicians' values on n items and a judge's on n + N, the judge of the given kind."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(3.0, 1.0, n + big_n)
    judge = {
        "biased": 0.8 * truth + 1.5 + rng.normal(0, 0.3, n + big_n),
        "noisy": truth + rng.normal(0, 2.0, n + big_n),
        "useless": rng.normal(3.0, 1.0, n + big_n),
        "anti-correlated": -truth + rng.normal(0, 0.3, n + big_n),
    }[kind]
    y = truth[:n] + rng.normal(0, 0.5, n)  # a physician's value: the item's truth and their own noise
    return y, judge[:n], judge[n:]


def test_hand_built_data_gives_ppi_pythons_figures():
    y = np.array([3.0, 4.0, 2.0, 5.0, 4.5])
    yhat = np.array([3.5, 3.0, 2.5, 4.0, 4.0])
    yhat_unlabeled = np.array([1.0, 3.0, 4.5, 2.0, 3.5, 5.0, 2.5])
    got = assert_matches_reference(y, yhat, yhat_unlabeled)
    # λ by hand: cov(Y, Ŷ) with ddof 0 over the labelled items, var of all the judge's values with ddof 1
    cov = np.mean((y - y.mean()) * (yhat - yhat.mean()))
    lam = cov / ((1 + 5 / 7) * np.var(np.r_[yhat, yhat_unlabeled], ddof=1))
    assert got.lam == pytest.approx(lam, abs=1e-12)
    assert 0 < got.lam < 1


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.01])
@pytest.mark.parametrize("kind", ["biased", "noisy", "useless", "anti-correlated"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_simulated_judges_give_ppi_pythons_figures(kind, seed, alpha):
    y, yhat, yhat_unlabeled = simulated(kind, seed)
    assert_matches_reference(y, yhat, yhat_unlabeled, alpha)
    classical = classical_mean_ci(y, alpha)
    low, high = ppi_py.classical_mean_ci(y, alpha=alpha)
    assert (classical.low, classical.high) == pytest.approx((low, high), abs=TOL)
    assert classical.mean == pytest.approx(y.mean(), abs=TOL)


def test_a_good_judge_narrows_the_interval_and_a_biased_one_does_not_shift_it():
    y, yhat, yhat_unlabeled = simulated("biased", seed=4)
    ppi, classical = ppi_mean_ci(y, yhat, yhat_unlabeled), classical_mean_ci(y)
    assert ppi.high - ppi.low < 0.6 * (classical.high - classical.low)
    # the judge reads 0.9 too high on average; the rectifier takes it out
    assert abs(ppi.mean - 3.0) < 0.1 < abs(np.concatenate([yhat, yhat_unlabeled]).mean() - 3.0)


def test_an_anti_correlated_judge_falls_back_to_the_classical_interval():
    y, yhat, yhat_unlabeled = simulated("anti-correlated", seed=5)
    ppi, classical = ppi_mean_ci(y, yhat, yhat_unlabeled), classical_mean_ci(y)
    assert ppi.lam == 0.0
    assert (ppi.mean, ppi.low, ppi.high) == pytest.approx((classical.mean, classical.low, classical.high), abs=1e-12)


def test_a_useless_judge_costs_almost_nothing():
    y, yhat, yhat_unlabeled = simulated("useless", seed=6)
    ppi, classical = ppi_mean_ci(y, yhat, yhat_unlabeled), classical_mean_ci(y)
    assert ppi.lam < 0.1
    assert ppi.high - ppi.low < 1.01 * (classical.high - classical.low)


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_weights_give_ppi_pythons_figures(seed):
    y, yhat, yhat_unlabeled = simulated("noisy", seed, n=150, big_n=900)
    rng = np.random.default_rng(seed)
    w, w_unlabeled = rng.uniform(0.2, 5.0, y.size), rng.uniform(0.2, 5.0, yhat_unlabeled.size)
    got = assert_matches_reference(y, yhat, yhat_unlabeled, 0.05, w, w_unlabeled)
    unweighted = ppi_mean_ci(y, yhat, yhat_unlabeled)
    assert got.mean != pytest.approx(unweighted.mean, abs=1e-3)  # the weights are used
    classical = classical_mean_ci(y, 0.05, w)
    assert (classical.low, classical.high) == pytest.approx(ppi_py.classical_mean_ci(y, w=w, alpha=0.05), abs=TOL)


@pytest.mark.parametrize("weighted", [False, True])
def test_without_unlabelled_items_the_ppi_interval_is_the_classical_one(weighted):
    y = np.array([2.0, 3.5, 4.0, 1.0, 2.5])
    w = np.array([1.0, 2.0, 1.0, 3.0, 1.0]) if weighted else None
    ppi = ppi_mean_ci(y, y + 0.5, np.array([]), 0.1, w=w)
    low, high = ppi_py.classical_mean_ci(y, w=w, alpha=0.1)
    assert ppi.lam == 0.0
    assert (ppi.low, ppi.high) == (pytest.approx(low, abs=TOL), pytest.approx(high, abs=TOL))
    assert ppi.mean == pytest.approx((low + high) / 2, abs=TOL)


def test_a_judge_giving_one_value_everywhere_gets_lambda_zero():
    y = np.array([2.0, 3.5, 4.0, 1.0])
    constant = np.full(4, 3.0), np.full(6, 3.0)
    assert power_tuning_lambda(y, *constant) == 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        assert np.isnan(ppi_py.ppi_mean_ci(y, *constant)[0][0])  # why the module decides here
    ppi, classical = ppi_mean_ci(y, *constant), classical_mean_ci(y)
    assert (ppi.mean, ppi.low, ppi.high) == pytest.approx((classical.mean, classical.low, classical.high), abs=1e-12)


def test_fewer_than_two_labelled_items_are_refused():
    with pytest.raises(ValueError, match="at least 2"):
        ppi_mean_ci(np.array([1.0]), np.array([1.0]), np.array([2.0, 3.0]))


def n0_of(y, halfwidth, alpha):
    return math.ceil((norm.ppf(1 - alpha / 2) * np.std(y) / halfwidth) ** 2)


@pytest.mark.parametrize("kind", ["biased", "noisy", "useless", "anti-correlated"])
@pytest.mark.parametrize(
    ("halfwidth", "alpha"),
    [(0.3, 0.05), (0.1, 0.05), (0.05, 0.05), (0.03, 0.05), (0.1, 0.1)],
)
def test_labels_needed_is_ppi_pythons_mean_power(kind, halfwidth, alpha):
    y, yhat, yhat_unlabeled = simulated(kind, seed=10, n=300, big_n=1700)
    n_max = y.size + yhat_unlabeled.size
    expected = ppi_py.ppi_mean_power(
        y, yhat, cost_Y=1, cost_Yhat=PREDICTION_COST, effective_n=n0_of(y, halfwidth, alpha), n_max=n_max
    )["n"]
    assert labels_needed(y, yhat, n_max, halfwidth, alpha) == expected


def test_labels_needed_covers_each_branch_of_the_search():
    y, yhat, _ = simulated("biased", seed=11, n=300, big_n=0)
    n0 = n0_of(y, 0.3, 0.05)
    few_items = labels_needed(y, yhat, 100, 0.3, 0.05)
    assert 0 < few_items < n0  # the judge saves physicians' labels
    assert labels_needed(y, yhat, 10**9, 0.3, 0.05) < few_items  # more unlabelled items save more
    assert labels_needed(y, yhat, n0 - 1, 0.3, 0.05) == n0 - 1  # unreachable: all the items, labelled
    useless_y, useless_yhat, _ = simulated("useless", seed=11, n=300, big_n=0)
    assert labels_needed(useless_y, useless_yhat, 10**6, 0.1, 0.05) >= 0.95 * n0_of(useless_y, 0.1, 0.05)


@pytest.mark.parametrize("weighted", [False, True])
def test_weighted_labels_needed_is_ppi_pythons(weighted):
    y, yhat, _ = simulated("noisy", seed=12, n=250, big_n=0)
    w = np.random.default_rng(12).uniform(0.5, 2.0, y.size) if weighted else None
    n0 = n0_of(y, 0.08, 0.05)
    expected = ppi_py.ppi_mean_power(y, yhat, cost_Y=1, cost_Yhat=PREDICTION_COST, effective_n=n0, n_max=5000, w=w)
    assert labels_needed(y, yhat, 5000, 0.08, 0.05, w=w) == expected["n"]
    assert ppi_correlation(y, yhat, w) == pytest.approx(expected["ppi_corr"], abs=1e-12)


@pytest.mark.parametrize("corr", [-0.95, -0.3, 0.0, 1e-6, 0.2, 0.5, 0.8, 0.99])
@pytest.mark.parametrize("effective_n", [1, 7, 50, 400, 3001])
@pytest.mark.parametrize("n_max", [None, 10, 60, 500, 4000, 10**7])
@pytest.mark.parametrize("cost_yhat", [PREDICTION_COST, 0.05])
def test_cheapest_pair_is_ppi_pythons_power(corr, effective_n, n_max, cost_yhat):
    expected = ppi_py.ppi_power(corr, cost_X=0, cost_Y=1, cost_Yhat=cost_yhat, effective_n=effective_n, n_max=n_max)
    assert cheapest_pair(corr, effective_n, n_max, 1.0, cost_yhat) == (expected["n"], expected["N"])


def test_a_judge_exactly_against_the_physicians_is_bounded_like_one_exactly_with_them():
    y = np.array([1.0, 2.0, 4.0, 3.0, 5.0])
    assert ppi_correlation(y, -y) == pytest.approx(-0.8)
    assert ppi_correlation(y, 2 * y) == pytest.approx(0.8)  # ppi-python's own bound, 1 - 1/n
    with pytest.raises(ValueError, match="strictly between"):
        ppi_py.ppi_mean_power(y, -y, cost_Y=1, cost_Yhat=PREDICTION_COST, effective_n=40, n_max=100)
    n0 = n0_of(y, 0.5, 0.05)
    expected = ppi_py.ppi_power(-0.8, cost_X=0, cost_Y=1, cost_Yhat=PREDICTION_COST, effective_n=n0, n_max=100)
    assert labels_needed(y, -y, 100, 0.5, 0.05) == expected["n"] < n0


def test_physicians_who_agree_on_every_item_need_no_more_labels():
    y = np.full(5, 3.0)
    assert ppi_correlation(y, np.arange(5.0)) == 0.0
    assert labels_needed(y, np.arange(5.0), 50, 0.1, 0.05) == 0


def test_a_half_width_that_is_not_positive_is_refused():
    with pytest.raises(ValueError, match="positive"):
        labels_needed(np.array([1.0, 2.0]), np.array([1.0, 2.0]), 10, 0.0, 0.05)


def test_the_95_percent_interval_covers_the_physicians_true_mean_95_percent_of_the_time():
    """A biased, noisy judge; three physicians per labelled item, each with their own noise; the truth is the
    expected physician value, 3.0. 2,000 repetitions: the coverage's standard error is about 0.5 %."""
    rng = np.random.default_rng(20250607)
    true_mean, n, big_n, repetitions = 3.0, 150, 1500, 2000
    covered = 0
    for _ in range(repetitions):
        truth = rng.normal(true_mean, 1.0, n + big_n)
        judge = 0.7 * truth + 1.2 + rng.normal(0, 0.5, n + big_n)
        physicians = truth[:n, None] + rng.normal(0, 0.6, (n, 3))
        ppi = ppi_mean_ci(physicians.mean(axis=1), judge[:n], judge[n:], 0.05)
        covered += ppi.low <= true_mean <= ppi.high
    assert 0.93 <= covered / repetitions <= 0.97
