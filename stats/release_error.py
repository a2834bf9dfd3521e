"""How many released items are probably wrong (pure): the count of released items whose true label is the wrong one,
with a 95 % interval that carries the uncertainty of everything the count rests on.

Model: Dawid–Skene's (:mod:`stats.dawid_skene`): each item's true label is drawn from a prior over the labels, and
each worker's label from their confusion row of that truth. The count is read from the model's full posterior,
drawn by Gibbs sampling, not from one fit: the plug-in sum of one fit's posteriors, with a Poisson-binomial interval
around it, takes the prior and the confusion matrices as known, and they are not. On a vetting round most released
items carry one "correct" from one reviewer, so the count is the prior's share of wrong items times each reviewer's
rate of passing a wrong item, and both are learnt from the few items with more than one label and from gold.

What the sampler assumes, and why:

* **Reviewers share a population.** Each reviewer's confusion row for a true label is drawn from a Dirichlet whose
  parameters (one mean row and one concentration) are learnt from all reviewers together (sampled too, by a
  Metropolis step on their logs). A reviewer with few wrong items seen borrows the others' rate of missing them
  instead of a flat prior's; one with many keeps their own.
* **Seniors are mostly right.** A senior (an adjudicator) sees only the items reviewers disagreed on or referred
  to them, and nobody reads those items after them, so the data cannot tell a senior who is usually right from one
  who errs as often as the items are wrong: either explains their verdicts. Their confusion rows take a fixed prior,
  right :data:`SENIOR_ACCURACY` of the time with the weight of :data:`SENIOR_WEIGHT` labels, which their verdicts
  then move only a little. It is an assumption the estimate rests on: every released item an adjudicator decided
  counts as wrong with about the chance this prior gives a senior's error, so seniors who err more often than that
  leave more wrong items released than the interval says.
* **Gold is a fact, not a sample.** A gold item's truth is fixed at its known label, and it teaches the workers'
  confusion rows; it is left out of the prior, because gold items are chosen (planted errors are far more common
  among them than among the items), and counting them would pull the prior towards the gold's own mix.

A label that no worker gave and no gold item holds is not in the model (as in :mod:`stats.dawid_skene`); when the
wrong label is such a label, no item can be wrong and the count is 0.

Each sweep draws, in turn: the confusion rows given the current truths, the prior, the population's parameters, and
every item's truth given the labels (vectorised over items, numpy only; scipy for the log-gamma function).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .bootstrap import CI_LEVEL, DEFAULT_SEED

DEFAULT_DRAWS = 1000
#: Sweeps dropped before the draws are kept: the chain starts from the majority vote and needs them to forget it.
BURN_IN = 300
#: An adjudicator's confusion rows start from this prior: right this share of the time, with the weight of this
#: many labels (the data alone cannot tell how often a senior is right: see above).
SENIOR_ACCURACY = 0.97
SENIOR_WEIGHT = 40.0
#: Metropolis steps on the population's parameters per sweep, and their size (on the log scale).
POPULATION_STEPS = 5
POPULATION_STEP_SIZE = 0.3
#: The population's Dirichlet parameters stay within these bounds (a flatter or sharper population is never needed
#: to explain reviewers' labels, and the bounds keep the gamma draws and logs finite).
LOG_PARAMETER_BOUNDS = (np.log(1e-2), np.log(1e4))
#: Gamma draws are floored here before they are normalised, so that no confusion cell is exactly 0 (its log is taken).
TINY = 1e-300

METHOD = (
    "Posterior draws of a Dawid–Skene model by Gibbs sampling (each draw takes the prior over true labels, every "
    "reviewer's confusion matrix from a population prior learnt from all reviewers, the adjudicators' from a prior "
    f"of {SENIOR_ACCURACY * 100:.0f} % right, and every item's truth, gold items fixed at their known label and left "
    "out of the prior); the mean and the 2.5 and 97.5 % quantiles of the number of released items drawn wrong."
)


@dataclass(frozen=True)
class _Labels:
    """The labels in the sampler's terms: label codes among the modelled labels (``modelled``: their codes in the
    caller's terms); ``gold_items`` / ``gold_labels`` the clamped items."""

    items: np.ndarray
    workers: np.ndarray
    labels: np.ndarray
    n_items: int
    n_workers: int
    modelled: np.ndarray
    gold_items: np.ndarray
    gold_labels: np.ndarray

    @property
    def n_labels(self) -> int:
        return len(self.modelled)


def wrong_items_estimate(
    items: np.ndarray,
    workers: np.ndarray,
    labels: np.ndarray,
    *,
    n_items: int,
    n_workers: int,
    n_labels: int,
    released: Sequence[int] | np.ndarray,
    wrong_label: int,
    true_labels: Mapping[int, int] | None = None,
    seniors: Sequence[int] | np.ndarray = (),
    n_draws: int = DEFAULT_DRAWS,
    burn_in: int = BURN_IN,
    seed: int = DEFAULT_SEED,
) -> dict:
    """The number of ``released`` items (item codes) whose true label is ``wrong_label``: ``{"mean", "low",
    "high", "items", "method"}``, the interval at 95 %, ``items`` the number of released items.

    The labels are :func:`stats.dawid_skene.fit`'s: ``workers[r]`` gave ``labels[r]`` to ``items[r]``, codes from 0,
    ``true_labels`` the gold (item code to label code). ``seniors``: the worker codes of adjudicators. Raises
    ValueError on codes out of range or arrays that do not match.
    """
    data = _labels(items, workers, labels, n_items=n_items, n_workers=n_workers, n_labels=n_labels,
                   true_labels=true_labels)  # fmt: skip
    chosen = _codes_in_range(released, n_items, "released items")
    if not 0 <= wrong_label < n_labels:
        raise ValueError(f"the wrong label must be a code from 0 to {n_labels - 1}")
    senior = np.zeros(n_workers, dtype=bool)
    senior[_codes_in_range(seniors, n_workers, "seniors")] = True
    if n_draws < 1 or burn_in < 0:
        raise ValueError("n_draws must be at least 1 and burn_in at least 0")
    wrong = np.flatnonzero(data.modelled == wrong_label)
    if not chosen.size or not wrong.size:
        return _summary(np.zeros(1), len(chosen))
    sampler = _Sampler(data, senior, np.random.default_rng(seed))
    counts = np.empty(n_draws)
    for sweep in range(burn_in + n_draws):
        truths = sampler.sweep()
        if sweep >= burn_in:
            counts[sweep - burn_in] = np.count_nonzero(truths[chosen] == wrong[0])
    return _summary(counts, len(chosen))


def _summary(counts: np.ndarray, n_released: int) -> dict:
    """The mean and the interval's ends of the drawn counts; the ends are counts drawn (the lower quantile rounded
    down, the upper up) and hold the mean between them."""
    tail = (1.0 - CI_LEVEL) / 2.0
    mean = float(counts.mean())
    low = min(float(np.quantile(counts, tail, method="lower")), mean)
    high = max(float(np.quantile(counts, 1.0 - tail, method="higher")), mean)
    return {"mean": mean, "low": low, "high": high, "items": n_released, "method": METHOD}


def _codes_in_range(codes: Sequence[int] | np.ndarray, n: int, name: str) -> np.ndarray:
    array = np.unique(np.asarray(codes, dtype=np.int64))
    if array.size and (array[0] < 0 or array[-1] >= n):
        raise ValueError(f"{name} must be codes from 0 to {n - 1}")
    return array


def _labels(
    items: np.ndarray,
    workers: np.ndarray,
    labels: np.ndarray,
    *,
    n_items: int,
    n_workers: int,
    n_labels: int,
    true_labels: Mapping[int, int] | None,
) -> _Labels:
    arrays = [np.asarray(a) for a in (items, workers, labels)]
    if any(a.ndim != 1 or a.shape != arrays[0].shape for a in arrays):
        raise ValueError("items, workers and labels must be 1-D arrays of the same length")
    for name, array, n in zip(("items", "workers", "labels"), arrays, (n_items, n_workers, n_labels), strict=True):
        if array.size and not np.issubdtype(array.dtype, np.integer):
            raise ValueError(f"{name} must be integer codes")
        _codes_in_range(array, n, name)
    items, workers, labels = (a.astype(np.int64) for a in arrays)
    gold = dict(true_labels or {})
    gold_items = _codes_in_range(list(gold), n_items, "gold items")
    gold_labels = np.array([gold[int(item)] for item in gold_items], dtype=np.int64)
    _codes_in_range(gold_labels, n_labels, "gold labels")
    modelled = np.union1d(labels, gold_labels)
    code = np.full(n_labels, -1)
    code[modelled] = np.arange(len(modelled))
    return _Labels(items, workers, code[labels], n_items, n_workers, modelled, gold_items, code[gold_labels])


class _Sampler:
    """The Gibbs chain: :meth:`sweep` draws every unknown once and returns the items' truths (modelled codes)."""

    def __init__(self, data: _Labels, senior: np.ndarray, rng: np.random.Generator) -> None:
        self.data, self.rng = data, rng
        k = data.n_labels
        self.reviewers = ~senior
        self.senior = senior
        off = (1.0 - SENIOR_ACCURACY) / max(k - 1, 1)
        self.senior_prior = SENIOR_WEIGHT * (np.full((k, k), off) + np.eye(k) * (SENIOR_ACCURACY - off))
        self.log_population = np.log(np.ones((k, k)) + 4.0 * np.eye(k))  # a start that leans to the diagonal
        self.in_prior = np.ones(data.n_items, dtype=bool)
        self.in_prior[data.gold_items] = False
        self.truths = self._majority()

    def _majority(self) -> np.ndarray:
        """Each item's most frequent label (the first on a tie; the most frequent overall without labels), gold
        items at their known label."""
        d = self.data
        votes = np.bincount(d.items * d.n_labels + d.labels, minlength=d.n_items * d.n_labels)
        votes = votes.reshape(d.n_items, d.n_labels)
        truths = votes.argmax(axis=1)
        truths[votes.sum(axis=1) == 0] = np.bincount(d.labels, minlength=d.n_labels).argmax() if d.labels.size else 0
        truths[d.gold_items] = d.gold_labels
        return truths

    def sweep(self) -> np.ndarray:
        confusion = self._confusion()
        log_confusion = np.log(confusion)
        self._population(log_confusion)
        prior = _dirichlet(self.rng, np.bincount(self.truths[self.in_prior], minlength=self.data.n_labels) + 1.0)
        self.truths = self._truths(np.log(prior), log_confusion)
        return self.truths

    def _confusion(self) -> np.ndarray:
        """Every worker's confusion matrix (worker, true, given) given the current truths."""
        d, k = self.data, self.data.n_labels
        cells = (d.workers * k + self.truths[d.items]) * k + d.labels
        counts = np.bincount(cells, minlength=d.n_workers * k * k).reshape(d.n_workers, k, k).astype(float)
        prior = np.where(self.senior[:, None, None], self.senior_prior, np.exp(self.log_population))
        return _dirichlet(self.rng, counts + prior)

    def _population(self, log_confusion: np.ndarray) -> None:
        """Metropolis steps on the log of the reviewers' shared Dirichlet parameters, one row per true label."""
        n = int(np.count_nonzero(self.reviewers))
        if not n:
            return
        logs_summed = log_confusion[self.reviewers].sum(axis=0)
        current = _population_density(self.log_population, logs_summed, n)
        low, high = LOG_PARAMETER_BOUNDS
        for _ in range(POPULATION_STEPS):
            step = POPULATION_STEP_SIZE * self.rng.standard_normal(self.log_population.shape)
            proposal = self.log_population + step
            inside = np.all((proposal > low) & (proposal < high), axis=1)
            density = np.where(inside, _population_density(np.clip(proposal, low, high), logs_summed, n), -np.inf)
            accept = np.log(self.rng.random(current.shape)) < density - current
            self.log_population = np.where(accept[:, None], proposal, self.log_population)
            current = np.where(accept, density, current)

    def _truths(self, log_prior: np.ndarray, log_confusion: np.ndarray) -> np.ndarray:
        """Each item's truth drawn from its posterior given the labels, gold items at their known label."""
        d = self.data
        given = log_confusion[d.workers, :, d.labels]  # (row, true label): log chance of the label given each truth
        log_posterior = np.tile(log_prior, (d.n_items, 1))
        for label in range(d.n_labels):
            log_posterior[:, label] += np.bincount(d.items, weights=given[:, label], minlength=d.n_items)
        posterior = np.exp(log_posterior - log_posterior.max(axis=1, keepdims=True))
        cumulative = np.cumsum(posterior, axis=1)
        draw = self.rng.random(d.n_items) * cumulative[:, -1]
        truths = np.minimum((cumulative < draw[:, None]).sum(axis=1), d.n_labels - 1)
        truths[d.gold_items] = d.gold_labels
        return truths


def _population_density(log_parameters: np.ndarray, logs_summed: np.ndarray, n: int) -> np.ndarray:
    """Per true label, the log density of the reviewers' confusion rows under Dirichlet(a) (``logs_summed``: the
    rows' logs summed over the ``n`` reviewers) plus the log prior of ``a``, on the scale of ``log a``.

    The prior: the mean row uniform, the concentration s = Σa with density (1 + s)^-2 (proper, and heavy enough in
    its tail to let reviewers be alike); in terms of ``a`` that is (1 + s)^-2 s^-(k-1), times Π a for the log
    scale."""
    a = np.exp(log_parameters)
    s = a.sum(axis=1)
    k = a.shape[1]
    likelihood = n * (gammaln(s) - gammaln(a).sum(axis=1)) + ((a - 1.0) * logs_summed).sum(axis=1)
    return likelihood - 2.0 * np.log1p(s) - (k - 1) * np.log(s) + log_parameters.sum(axis=1)


def _dirichlet(rng: np.random.Generator, alpha: np.ndarray) -> np.ndarray:
    """Dirichlet draws along the last axis, through gamma draws floored at :data:`TINY`."""
    draws = np.maximum(rng.gamma(alpha), TINY)
    return draws / draws.sum(axis=-1, keepdims=True)
