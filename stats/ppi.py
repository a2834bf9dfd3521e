"""Prediction-powered inference for a mean (pure; numpy and scipy only): physicians' mean score of a system, from a
sample of items they labelled and a judge's values on every item.

Method: PPI++ (Angelopoulos, Duchi & Zrnic 2023, *PPI++: Efficient Prediction-Powered Inference*,
arXiv:2311.01453), written to give the figures of ppi-python 0.2.3 (``ppi_py``), which the portal cannot import
(it pulls numba and a downloader) and the tests use as the reference. With ``Y`` the physicians' values on the n
labelled items, ``Ŷ`` the judge's values on them and ``Ŷu`` the judge's values on the N unlabelled items:

* the estimate is ``λ·mean(Ŷu) + mean(Y − λ·Ŷ)``, its standard error ``√(sd(λ·Ŷu)²/N + sd(Y − λ·Ŷ)²/n)`` with
  population standard deviations (ddof 0), and the interval the normal one, ``± z_{1−α/2}·se``
  (statsmodels' ``_zconfint_generic``, which ``ppi_py`` calls);
* λ (power tuning, ``ppi_mean_ci(..., lam=None)``) is ``cov(Y, Ŷ) / ((1 + n/N)·var(Ŷ ∪ Ŷu))``, the covariance over
  the labelled items with ddof 0 and the variance over all the judge's values with ddof 1, clipped to [0, 1]: a
  judge that moves against the physicians, or not with them, gets λ = 0, and the interval is the classical one;
* the classical interval (``classical_mean_ci``) is ``mean(Y) ± z·sd(Y)/√n``, sd with ddof 0.

Where ``ppi_py`` gives no number, this module takes a decision of its own: with N = 0 there is nothing to impute and
the PPI interval is the classical one with λ = 0 (``ppi_py`` divides by N); a judge whose values are all equal
carries no information and gets λ = 0 (``ppi_py``'s 0/0 gives NaN).

Weights (a designed sample that drew items with unequal probabilities): ``w`` on the labelled items and
``w_unlabeled`` on the others, each rescaled to sum to its count, enter as ``ppi_py`` has them, multiplying the
values (its ``w`` and ``w_unlabeled`` arguments).

Sample size (:func:`labels_needed`): ``ppi_py.ppi_mean_power`` with the judge's values almost free
(:data:`PREDICTION_COST`), asked for the cheapest pair (n, N) as precise as a classical sample of n0 items, under
n + N ≤ the items there are; n is the number of physician-labelled items that takes, in all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

#: The judge's cost per item relative to a physician's label (1): next to nothing, as ``ppi_mean_power`` is asked
#: in the issue (a zero cost would make its optimal pair degenerate).
PREDICTION_COST = 1e-9
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class Interval:
    """A point estimate of a mean and its two-sided interval."""

    mean: float
    low: float
    high: float


@dataclass(frozen=True)
class PPIInterval(Interval):
    """A prediction-powered estimate, with the power-tuning λ it used (0: the classical estimate)."""

    lam: float


def z_critical(alpha: float) -> float:
    """``z_{1−α/2}``, the normal quantile of a two-sided interval of coverage 1 − α."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, not {alpha}")
    return float(norm.ppf(1 - alpha / 2.0))


def classical_mean_ci(y: np.ndarray, alpha: float = DEFAULT_ALPHA, w: np.ndarray | None = None) -> Interval:
    """The CLT interval of the mean of ``y`` (``ppi_py.classical_mean_ci``; weights as it has them)."""
    y = _vector(y)
    wy = _weights(w, y.size) * y
    return _normal_interval(float(wy.mean()), float(wy.std()) / math.sqrt(y.size), alpha)


def power_tuning_lambda(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_unlabeled: np.ndarray,
    w: np.ndarray | None = None,
    w_unlabeled: np.ndarray | None = None,
) -> float:
    """The λ that minimises the PPI estimate's variance, clipped to [0, 1] (``ppi_py``'s ``_calc_lam_glm`` for a
    mean). 0 without unlabelled items or when the judge's values are all equal (see the module docstring)."""
    y, yhat, yhat_unlabeled = _vector(y), _vector(yhat), _vector(yhat_unlabeled)
    n, big_n = y.size, yhat_unlabeled.size
    if big_n == 0:
        return 0.0
    w, w_unlabeled = _weights(w, n), _weights(w_unlabeled, big_n)
    # ppi_py centres the gradients at the λ = 1 estimate; without weights the centring cancels, with them it does not
    pointest = (w_unlabeled * yhat_unlabeled).mean() + (w * (y - yhat)).mean()
    grads = w * (y - pointest)
    grads_hat = w * (yhat - pointest)
    grads_hat_unlabeled = w_unlabeled * (yhat_unlabeled - pointest)
    covariance = float(np.dot(grads - grads.mean(), grads_hat - grads_hat.mean())) / n
    variance = float(np.var(np.concatenate([grads_hat, grads_hat_unlabeled]), ddof=1))
    if variance == 0:
        return 0.0
    return float(np.clip(covariance / ((1 + n / big_n) * variance), 0, 1))


def ppi_mean_ci(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_unlabeled: np.ndarray,
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
    w: np.ndarray | None = None,
    w_unlabeled: np.ndarray | None = None,
) -> PPIInterval:
    """The prediction-powered estimate and interval of the physicians' mean (``ppi_py.ppi_mean_pointestimate`` and
    ``ppi_mean_ci``); ``lam=None`` tunes λ (:func:`power_tuning_lambda`), ``lam=0`` is the classical estimate."""
    y, yhat, yhat_unlabeled = _vector(y), _vector(yhat), _vector(yhat_unlabeled)
    if y.size < 2 or yhat.size != y.size:
        raise ValueError(f"need at least 2 labelled items with a prediction each, not {y.size} and {yhat.size}")
    n, big_n = y.size, yhat_unlabeled.size
    if big_n == 0:
        classical = classical_mean_ci(y, alpha, w)
        return PPIInterval(classical.mean, classical.low, classical.high, 0.0)
    if lam is None:
        lam = power_tuning_lambda(y, yhat, yhat_unlabeled, w, w_unlabeled)
    w, w_unlabeled = _weights(w, n), _weights(w_unlabeled, big_n)
    rectifier = w * (y - lam * yhat)
    imputed = w_unlabeled * (lam * yhat_unlabeled)
    std_error = math.sqrt(float(imputed.var()) / big_n + float(rectifier.var()) / n)
    interval = _normal_interval(float(imputed.mean()) + float(rectifier.mean()), std_error, alpha)
    return PPIInterval(interval.mean, interval.low, interval.high, float(lam))


def ppi_correlation(y: np.ndarray, yhat: np.ndarray, w: np.ndarray | None = None) -> float:
    """The PPI correlation of the judge with the physicians on the labelled items (``ppi_py``'s ``_get_ppi_corr``),
    at most 1 − 1/n as there. Where it does not define one, this module does: 0 when either side has no spread (the
    judge cannot help), and at least −(1 − 1/n), the mirror of the upper bound (``ppi_py`` refuses −1)."""
    y, yhat = _vector(y), _vector(yhat)
    n = y.size
    w = _weights(w, n)
    pointest = float(np.sum(w * y) / np.sum(w))
    grads = w * (y - pointest)
    grads_hat = w * (yhat - pointest)
    grads_cent, grads_hat_cent = grads - grads.mean(), grads_hat - grads_hat.mean()
    spread = math.sqrt(float(np.dot(grads_cent, grads_cent)) / n * float(np.dot(grads_hat_cent, grads_hat_cent)) / n)
    if spread == 0:
        return 0.0
    corr = float(np.dot(grads_cent, grads_hat_cent)) / n / spread
    return min(max(corr, -(1 - 1 / n)), 1 - 1 / n)


def classical_sample_size(y: np.ndarray, halfwidth: float, alpha: float = DEFAULT_ALPHA) -> int:
    """n0 = ⌈(z·sd(y)/H)²⌉: how many labelled items give a classical interval of half-width H (sd with ddof 0, as
    the classical interval has it)."""
    if not halfwidth > 0 or not math.isfinite(halfwidth):
        raise ValueError(f"the half-width must be a positive number, not {halfwidth}")
    return math.ceil((z_critical(alpha) * float(_vector(y).std()) / halfwidth) ** 2)


def labels_needed(
    y: np.ndarray,
    yhat: np.ndarray,
    n_max: int,
    halfwidth: float,
    alpha: float = DEFAULT_ALPHA,
    w: np.ndarray | None = None,
) -> int:
    """How many physician-labelled items (in all, not still to collect) the PPI estimate needs to be as precise as
    a classical interval of half-width ``halfwidth`` (on n0 items, :func:`classical_sample_size`), with at most
    ``n_max`` items labelled or not:
    ``ppi_py.ppi_mean_power(y, yhat, cost_Y=1, cost_Yhat=PREDICTION_COST, effective_n=n0, n_max=n_max)["n"]``.
    With n0 = 0 (physicians who all gave the same value) the answer is 0: ``ppi_py`` divides 0 by 0 there."""
    effective_n = classical_sample_size(y, halfwidth, alpha)
    if effective_n == 0:
        return 0
    return cheapest_pair(ppi_correlation(y, yhat, w), effective_n, n_max)[0]


def cheapest_pair(
    ppi_corr: float, effective_n: int, n_max: int | None = None, cost_y: float = 1.0, cost_yhat: float = PREDICTION_COST
) -> tuple[int, int]:
    """``(n, N)``: the cheapest numbers of labelled and unlabelled items whose PPI estimate is as precise as a
    classical one on ``effective_n`` items (``ppi_py.ppi_power`` with ``effective_n``, no cost of the unlabelled
    items themselves), with n + N ≤ ``n_max`` if given; n_max labelled items where even that is not enough.
    Rounded as ``ppi_py`` rounds (Python's ``round``: halves to even)."""
    corr_sq = ppi_corr**2
    gamma = cost_yhat / cost_y
    ppi_cost = cost_y * (1 - corr_sq + gamma * corr_sq + 2 * math.sqrt(gamma * corr_sq * (1 - corr_sq)))
    n, big_n = _optimal_pair(effective_n, ppi_corr, gamma)
    if cost_y < ppi_cost or big_n < 0:
        n, big_n = round(effective_n), 0
    if n_max is None or n + big_n <= n_max:
        return n, big_n
    if effective_n > n_max:
        return n_max, 0
    n = round(effective_n * n_max * (1 - corr_sq) / (n_max - corr_sq * effective_n))
    return n, n_max - n


def _optimal_pair(n0: float, ppi_corr: float, gamma: float) -> tuple[int, int]:
    """``ppi_py``'s ``_optimal_pair``: the unconstrained cheapest pair, before the caller's bounds."""
    corr_sq = ppi_corr**2
    n = n0 * (1 - corr_sq + math.sqrt(gamma * corr_sq * (1 - corr_sq)))
    big_n = n * (n0 - n) / (n - (1 - corr_sq) * n0) if ppi_corr != 0 else 0
    return round(n), round(big_n)


def _normal_interval(mean: float, std_error: float, alpha: float) -> Interval:
    half = z_critical(alpha) * std_error
    return Interval(mean, mean - half, mean + half)


def _vector(values) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"expected a 1-D array of values, not shape {array.shape}")
    return array


def _weights(w: np.ndarray | None, count: int) -> np.ndarray:
    """The weights rescaled to sum to ``count`` (``ppi_py``'s ``construct_weight_vector``); ones without weights."""
    if w is None:
        return np.ones(count)
    w = _vector(w)
    if w.size != count:
        raise ValueError(f"{w.size} weights for {count} values")
    return w / w.sum() * count


# --- a designed sample ---------------------------------------------------------------------------------------------
#
# Physicians label a Poisson sample of the N items: item i is drawn independently with a known probability π_i, and
# the judge scored every item. With ξ_i = 1 for a drawn item, f_i the judge's value and Y_i the physicians':
#
#   θ̂(λ) = (1/N) Σ_i [λ f_i + ξ_i (Y_i − λ f_i) / π_i]
#   V̂(λ) = (1/N²) Σ_i ξ_i (1 − π_i) (Y_i − λ f_i)² / π_i²
#
# θ̂(λ) is unbiased for the N items' mean of Y for any fixed λ (each ξ_i/π_i has expectation 1); V̂ is the
# Horvitz–Thompson estimate of its variance under Poisson sampling, for this finite population (no
# superpopulation term: the N items are all there is). λ = 0 is the Horvitz–Thompson estimate from the physicians
# alone; the tuned λ minimises V̂. An item drawn with certainty (π_i = 1) adds nothing to V̂: with every π_i = 1 the
# physicians labelled everything, θ̂ is their plain mean whatever λ, and the variance is zero (a point interval).


def design_mean_ci(
    f: np.ndarray,
    y: np.ndarray,
    pi: np.ndarray,
    sampled: np.ndarray,
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
) -> PPIInterval:
    """The design-based estimate of the N items' mean physician value and its normal interval (see the comment
    above): ``f`` the judge's values on the N items, ``y`` the physicians' (read on the sampled items only; any
    value elsewhere, NaN included), ``pi`` each item's inclusion probability, ``sampled`` whether it was drawn.
    ``lam=None`` tunes λ (:func:`design_tuning_lambda`), ``lam=0`` is the physicians-only Horvitz–Thompson
    estimate."""
    f, y, pi, sampled = _design_vectors(f, y, pi, sampled)
    if lam is None:
        lam = design_tuning_lambda(f, y, pi, sampled)
    residual = y[sampled] - lam * f[sampled]
    big_n = f.size
    mean = (lam * float(f.sum()) + float(np.sum(residual / pi[sampled]))) / big_n
    variance = float(np.sum((1 - pi[sampled]) * residual**2 / pi[sampled] ** 2)) / big_n**2
    interval = _normal_interval(mean, math.sqrt(variance), alpha)
    return PPIInterval(interval.mean, interval.low, interval.high, float(lam))


def design_tuning_lambda(f: np.ndarray, y: np.ndarray, pi: np.ndarray, sampled: np.ndarray) -> float:
    """The λ minimising V̂(λ), clipped to [0, 1]: with a_i = ξ_i (1 − π_i) / π_i², V̂ is a quadratic in λ whose
    minimum is Σ a_i Y_i f_i / Σ a_i f_i². 0 where V̂ does not depend on λ (every drawn item certain, or the judge
    all zeros on the uncertain ones): nothing to gain from the judge there."""
    f, y, pi, sampled = _design_vectors(f, y, pi, sampled)
    a = (1 - pi[sampled]) / pi[sampled] ** 2
    f_s, y_s = f[sampled], y[sampled]
    denominator = float(np.sum(a * f_s**2))
    if denominator == 0:
        return 0.0
    return float(np.clip(float(np.sum(a * y_s * f_s)) / denominator, 0, 1))


def _design_vectors(f, y, pi, sampled) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The four vectors checked: one length, π in (0, 1], an item drawn with certainty in the sample, at least one
    item drawn, and finite values where they are read."""
    f, y, pi = _vector(f), _vector(y), _vector(pi)
    sampled = np.asarray(sampled, dtype=bool)
    if not f.size == y.size == pi.size == sampled.size:
        raise ValueError(
            f"{f.size} judge values, {y.size} physician values, {pi.size} probabilities, {sampled.size} flags"
        )
    if not np.all((pi > 0) & (pi <= 1)):
        raise ValueError("every inclusion probability must be in (0, 1]")
    if np.any(~sampled & (pi == 1)):
        raise ValueError("an item drawn with probability 1 must be in the sample")
    if not sampled.any():
        raise ValueError("no item was drawn")
    if not (np.all(np.isfinite(f)) and np.all(np.isfinite(y[sampled]))):
        raise ValueError("the judge's values and the drawn items' physician values must be finite numbers")
    return f, y, pi, sampled
