"""stats.ppi's estimate under a designed (Poisson) physician sample: known answers worked by hand on four items, the
uniform design against the unweighted formulas where they coincide, every item certain, the refusals, and seeded
simulations: the 95 % interval's coverage of the finite population's mean, and the weights removing the bias of a
sample drawn towards some questions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stats.ppi import classical_mean_ci, design_mean_ci, design_tuning_lambda

Z = 1.959963984540054  # z_{0.975}

# Four items; the third was not drawn (its physician value is never read). Worked by hand in the tests below.
F = np.array([0.2, 0.8, 0.5, 0.4])
Y = np.array([0.0, 1.0, np.nan, 0.25])
PI = np.array([0.5, 1.0, 0.25, 0.5])
SAMPLED = np.array([True, True, False, True])


def test_physicians_only_by_hand():
    # θ̂ = (0/0.5 + 1/1 + 0.25/0.5) / 4 = 0.375; V̂ = (0.5 · 0.25² / 0.5²) / 16 = 0.125 / 16 (the certain item adds 0)
    got = design_mean_ci(F, Y, PI, SAMPLED, lam=0)
    half = Z * math.sqrt(0.125 / 16)
    assert (got.mean, got.low, got.high, got.lam) == pytest.approx((0.375, 0.375 - half, 0.375 + half, 0.0))


def test_tuned_lambda_by_hand():
    # a_i = (1 − π)/π² on the drawn items: 2, 0, 2; λ = Σ a·Y·f / Σ a·f² = (2·0.25·0.4) / (2·0.04 + 2·0.16) = 0.5
    assert design_tuning_lambda(F, Y, PI, SAMPLED) == pytest.approx(0.5)
    # residuals Y − 0.5 f: −0.1, 0.6, 0.05; θ̂ = (0.5 · 1.9 + (−0.2 + 0.6 + 0.1)) / 4 = 0.3625
    # V̂ = (2 · 0.01 + 0 + 2 · 0.0025) / 16 = 0.025 / 16
    got = design_mean_ci(F, Y, PI, SAMPLED)
    half = Z * math.sqrt(0.025 / 16)
    assert (got.mean, got.low, got.high, got.lam) == pytest.approx((0.3625, 0.3625 - half, 0.3625 + half, 0.5))
    assert (
        got.high - got.low
        < design_mean_ci(F, Y, PI, SAMPLED, lam=0).high - design_mean_ci(F, Y, PI, SAMPLED, lam=0).low
    )


def test_lambda_is_clipped_to_zero_and_one():
    # λ < 0 by the formula (Σ a·Y·f < 0) gets 0; λ > 1 (a judge far below the physicians) is used fully, λ = 1
    assert design_tuning_lambda(F, -F, PI, SAMPLED) == 0.0
    assert design_tuning_lambda(F, 3 * F, PI, SAMPLED) == 1.0


def test_every_item_certain_is_the_plain_mean_with_zero_variance():
    y = np.array([0.0, 1.0, 0.5, 0.25])
    everything = np.ones(4, dtype=bool)
    for lam in (None, 0.0, 0.7):
        got = design_mean_ci(F, y, np.ones(4), everything, lam=lam)
        assert (got.mean, got.low, got.high) == pytest.approx((0.4375, 0.4375, 0.4375))
    assert design_tuning_lambda(F, y, np.ones(4), everything) == 0.0


def test_uniform_design_coincides_with_the_unweighted_formulas():
    """With π = n/N and n items drawn, λ = 0 is the physicians' plain mean, and for a fixed λ the estimate is
    λ·mean(f over all N) + mean(Y − λ f over the n); V̂ is (1 − n/N)·mean((Y − λ f)²)/n (Poisson sampling's
    uncentred form, with the finite population correction)."""
    rng = np.random.default_rng(5)
    big_n, n = 50, 10
    f = rng.uniform(0, 1, big_n)
    y = np.clip(f + rng.normal(0, 0.2, big_n), 0, 1)
    sampled = np.zeros(big_n, dtype=bool)
    sampled[rng.choice(big_n, n, replace=False)] = True
    pi = np.full(big_n, n / big_n)
    assert design_mean_ci(f, y, pi, sampled, lam=0).mean == pytest.approx(classical_mean_ci(y[sampled]).mean)
    for lam in (0.0, 0.4, 1.0):
        got = design_mean_ci(f, y, pi, sampled, lam=lam)
        residual = y[sampled] - lam * f[sampled]
        assert got.mean == pytest.approx(lam * f.mean() + residual.mean())
        variance = (1 - n / big_n) * np.mean(residual**2) / n
        assert (got.high - got.mean) == pytest.approx(Z * math.sqrt(variance))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pi": np.array([0.5, 1.0, 0.0, 0.5])}, "in \\(0, 1\\]"),
        ({"pi": np.array([0.5, 1.0, 1.0, 0.5])}, "probability 1 must be in the sample"),
        ({"sampled": np.zeros(4, dtype=bool), "pi": np.full(4, 0.5)}, "no item was drawn"),
        ({"y": np.array([0.0, np.nan, 0.0, 0.0])}, "finite"),
        ({"f": F[:3]}, "3 judge values"),
    ],
)
def test_refusals(change, message):
    args = {"f": F, "y": Y, "pi": PI, "sampled": SAMPLED, **change}
    with pytest.raises(ValueError, match=message):
        design_mean_ci(**args)


def stratified_population(seed: int, big_n: int = 500):
    """A finite population: the physicians' value Y, a judge f correlated with it, and π drawn towards the questions
    where the judge is least certain (f near 0.5: π 0.4; elsewhere 0.08). The uncertain questions score lower, so a
    sample drawn towards them and read unweighted is biased downwards."""
    rng = np.random.default_rng(seed)
    truth = rng.beta(2, 1.5, big_n)
    f = np.clip(truth + rng.normal(0, 0.12, big_n), 0, 1)
    uncertain = np.abs(f - 0.5) < 0.15
    y = np.where(uncertain, truth * 0.6, truth)
    pi = np.where(uncertain, 0.4, 0.08)
    return f, y, pi


def test_the_interval_covers_the_population_mean_in_95_percent_of_repetitions():
    f, y, pi = stratified_population(seed=43)
    target = y.mean()
    rng = np.random.default_rng(2026)
    covered = {"tuned": 0, "physicians only": 0}
    repetitions = 1000
    for _ in range(repetitions):
        sampled = rng.random(f.size) < pi
        for name, lam in (("tuned", None), ("physicians only", 0.0)):
            got = design_mean_ci(f, y, pi, sampled, lam=lam)
            covered[name] += got.low <= target <= got.high
    for name, hits in covered.items():
        assert 0.93 <= hits / repetitions <= 0.97, (name, hits)


def test_the_weights_remove_the_bias_that_the_naive_mean_has():
    f, y, pi = stratified_population(seed=7)
    target = y.mean()
    rng = np.random.default_rng(11)
    weighted, naive = [], []
    for _ in range(1000):
        sampled = rng.random(f.size) < pi
        weighted.append(design_mean_ci(f, y, pi, sampled).mean)
        naive.append(y[sampled].mean())
    # the mean of 1,000 estimates: its own standard error is a few thousandths
    assert abs(np.mean(weighted) - target) < 0.005
    assert np.mean(naive) < target - 0.05
