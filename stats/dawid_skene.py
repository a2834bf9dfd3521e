"""The Dawid–Skene model of reviewers' labels (pure): per item a posterior over the true label, per reviewer a
confusion matrix (Dawid & Skene 1979), fitted by EM.

A vectorised reimplementation of crowd-kit 1.4.2's ``DawidSkene(n_iter=100, tol=1e-5)``, step for step, so that
its results are crowd-kit's (the tests compare them): the same start (each item's majority-vote shares), E and M
steps, gold clamping, loss (the evidence lower bound per label) and stopping rule (stop once the loss gains less
than ``tol``, or after ``n_iter`` iterations). crowd-kit's quirks are kept because they move the results:

* probabilities are floored at 1e-10 before logs, and a worker's confusion cells are floored at 1e-10 only for
  the labels the worker gave (a label never given has probability 0, not 1e-10);
* the loss counts the prior once per label, not once per item;
* a label that is only in gold joins the model as crowd-kit adds it: a column created part-way through the gold
  clamping, so the starting prior averages it over the gold items clamped from then on only (gold is walked in
  the order of its labels' first appearance in ``true_labels``).

Items, workers and labels are integer codes (``0..n-1``); every item and every worker must have a label. A label
code that no worker gave and no gold item holds is not in the model (crowd-kit never sees it): its posterior and
prior are 0 and its confusion row is 0. Gold for an item is a fact, not evidence: the item's posterior is that
label, each iteration, and the workers' confusion matrices learn from it.

The fit loop is numpy only (sums by :func:`numpy.bincount`); :func:`confusion_intervals` uses scipy's beta
quantiles.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta

from .bootstrap import CI_LEVEL

#: crowd-kit's floor for probabilities before their logs are taken.
EPS = 1e-10
DEFAULT_ITERATIONS = 100
DEFAULT_TOLERANCE = 1e-5


@dataclass(frozen=True)
class DawidSkeneFit:
    """A fitted model.

    ``posteriors`` ``(n_items, n_labels)``: each item's distribution over its true label (rows sum to 1).
    ``priors`` ``(n_labels,)``: the mean posterior. ``errors`` ``(n_workers, n_labels, n_labels)``: row = true
    label, column = the label the worker gave; each row of a modelled label sums to 1. ``loss_history``: the loss
    after each iteration; ``iterations`` is its length.
    """

    posteriors: np.ndarray
    priors: np.ndarray
    errors: np.ndarray
    iterations: int
    loss_history: tuple[float, ...]


@dataclass(frozen=True)
class ConfusionIntervals:
    """Jeffreys intervals per worker: ``low`` / ``high`` ``(n_workers, n_labels, n_labels)`` for each confusion
    cell (row = true label, column = given label); ``accuracy_low`` / ``accuracy_high`` ``(n_workers,)`` for the
    share of the worker's labels that are correct, whose point estimate is ``share_correct``."""

    low: np.ndarray
    high: np.ndarray
    share_correct: np.ndarray
    accuracy_low: np.ndarray
    accuracy_high: np.ndarray


@dataclass(frozen=True)
class _Data:
    """The labels in the model's terms: ``given`` is a label's code among the modelled labels, ``cell`` indexes
    the (worker, given label) pair, ``present`` says which pairs occur."""

    items: np.ndarray
    given: np.ndarray
    cell: np.ndarray
    present: np.ndarray
    n_items: int
    n_workers: int
    n_modelled: int


def fit(
    items: np.ndarray,
    workers: np.ndarray,
    labels: np.ndarray,
    *,
    n_items: int,
    n_workers: int,
    n_labels: int,
    true_labels: Mapping[int, int] | None = None,
    n_iter: int = DEFAULT_ITERATIONS,
    tol: float = DEFAULT_TOLERANCE,
) -> DawidSkeneFit:
    """Fit the model to one label per row: ``workers[r]`` gave ``labels[r]`` to ``items[r]``.

    ``true_labels`` maps an item to its known label (gold). Raises ValueError on codes out of range, an item or a
    worker without a label, or no labels at all.
    """
    items, workers, labels = _codes(items, workers, labels, n_items=n_items, n_workers=n_workers, n_labels=n_labels)
    gold_items, gold_labels = _gold(true_labels, n_items=n_items, n_labels=n_labels)
    modelled, n_given = _modelled_labels(labels, gold_labels, n_labels)
    code = np.full(n_labels, -1)
    code[modelled] = np.arange(len(modelled))
    data = _model_data(items, workers, code[labels], n_items, n_workers, len(modelled))
    gold = code[gold_labels]

    clamped = np.eye(data.n_modelled)[:, gold]
    posteriors = _majority_shares(data)
    posteriors[:, gold_items] = clamped
    priors = _starting_priors(posteriors, gold, n_given)
    counts, errors, log_errors = _m_step(data, posteriors)
    history: list[float] = []
    loss = -np.inf
    for _ in range(n_iter):
        posteriors = _e_step(data, priors, log_errors)
        posteriors[:, gold_items] = clamped
        priors = posteriors.mean(axis=1)
        counts, errors, log_errors = _m_step(data, posteriors)
        new_loss = _evidence_lower_bound(posteriors, priors, counts, log_errors) / len(data.items)
        history.append(new_loss)
        if new_loss - loss < tol:
            break
        loss = new_loss
    return _in_all_labels(data, modelled, n_labels, posteriors, priors, errors, tuple(history))


def accuracy(result: DawidSkeneFit) -> np.ndarray:
    """Per worker, the chance that a label is right on an item drawn from the prior: Σ_k prior_k · errors[w, k, k]."""
    return np.einsum("k,wkk->w", result.priors, result.errors)


def confusion_intervals(
    result: DawidSkeneFit,
    items: np.ndarray,
    workers: np.ndarray,
    labels: np.ndarray,
    *,
    level: float = CI_LEVEL,
) -> ConfusionIntervals:
    """Jeffreys intervals (:func:`jeffreys_interval`) from the expected counts of the fitted model.

    Cell (w, k, l): x = Σ_i posterior_ik over the items where worker w gave l, n = Σ_i posterior_ik over all of
    w's items. Accuracy: x = Σ posterior of the label given over w's labels, n = the number of w's labels. The
    posteriors are taken as known: the intervals ignore their own uncertainty (and the prior's), so they are
    narrower than the model's whole uncertainty. Where n is 0 the interval is the prior's, Beta(1/2, 1/2).
    ``items``, ``workers`` and ``labels`` are the data the model was fitted to, or a part of it (one QA type's
    labels, say); a worker with no label there has ``share_correct`` NaN.
    """
    n_workers, n_labels = result.errors.shape[0], result.priors.shape[0]
    items, workers, labels = (np.asarray(a, dtype=np.int64) for a in (items, workers, labels))
    expected = _sums_by(workers * n_labels + labels, result.posteriors[items].T, n_workers * n_labels)
    cells = expected.reshape(n_labels, n_workers, n_labels).transpose(1, 0, 2)  # (worker, true, given)
    rows = np.broadcast_to(cells.sum(axis=2, keepdims=True), cells.shape)
    correct = np.bincount(workers, weights=result.posteriors[items, labels], minlength=n_workers)
    labelled = np.bincount(workers, minlength=n_workers).astype(float)
    low, high = jeffreys_interval(cells, rows, level)
    accuracy_low, accuracy_high = jeffreys_interval(correct, labelled, level)
    share = np.divide(correct, labelled, out=np.full(n_workers, np.nan), where=labelled > 0)
    return ConfusionIntervals(low, high, share, accuracy_low, accuracy_high)


def jeffreys_interval(x: np.ndarray, n: np.ndarray, level: float = CI_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """The Jeffreys interval for ``x`` successes in ``n`` trials, elementwise: the ``level`` central quantiles of
    Beta(x + 1/2, n − x + 1/2), widened where needed to contain x / n. ``x`` and ``n`` may be expected
    (fractional) counts; where ``n`` is 0 the interval is the prior's, Beta(1/2, 1/2).

    The plain quantiles leave x / n outside near the ends (at x = n the upper bound is below 1), and a share
    shown outside its own interval reads as a contradiction; Brown, Cai & DasGupta (2001) set the bound to 1 at
    x = n (0 at x = 0) for the same reason, which the widening does, and continuously for fractional counts."""
    tail = (1.0 - level) / 2.0
    n = np.asarray(n, dtype=float)
    x = np.clip(np.asarray(x, dtype=float), 0.0, n)  # expected counts can pass n by rounding
    a, b = x + 0.5, n - x + 0.5
    low, high = beta.ppf(tail, a, b), beta.ppf(1.0 - tail, a, b)
    share = np.divide(x, n, out=np.full(np.broadcast(x, n).shape, np.nan), where=n > 0)
    inside = np.isfinite(share)
    return np.where(inside, np.minimum(low, share), low), np.where(inside, np.maximum(high, share), high)


def _codes(
    items: np.ndarray, workers: np.ndarray, labels: np.ndarray, *, n_items: int, n_workers: int, n_labels: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    arrays = tuple(np.asarray(a) for a in (items, workers, labels))
    if any(a.ndim != 1 or a.shape != arrays[0].shape for a in arrays):
        raise ValueError("items, workers and labels must be 1-D arrays of the same length")
    if not arrays[0].size:
        raise ValueError("no labels to fit")
    for name, a, n in zip(("items", "workers", "labels"), arrays, (n_items, n_workers, n_labels), strict=True):
        if not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"{name} must be integer codes")
        if a.min() < 0 or a.max() >= n:
            raise ValueError(f"{name} must be codes from 0 to {n - 1}")
    for name, a, n in zip(("item", "worker"), arrays[:2], (n_items, n_workers), strict=True):
        unlabelled = np.flatnonzero(np.bincount(a, minlength=n) == 0)
        if unlabelled.size:
            raise ValueError(f"{name} {int(unlabelled[0])} has no label")
    return tuple(a.astype(np.int64) for a in arrays)  # type: ignore[return-value]


def _gold(true_labels: Mapping[int, int] | None, *, n_items: int, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """Gold items and labels as arrays, in the mapping's order (crowd-kit's order of clamping)."""
    pairs = list((true_labels or {}).items())
    gold_items = np.array([item for item, _ in pairs], dtype=np.int64)
    gold_labels = np.array([label for _, label in pairs], dtype=np.int64)
    if pairs and (gold_items.min() < 0 or gold_items.max() >= n_items):
        raise ValueError(f"gold items must be codes from 0 to {n_items - 1}")
    if pairs and (gold_labels.min() < 0 or gold_labels.max() >= n_labels):
        raise ValueError(f"gold labels must be codes from 0 to {n_labels - 1}")
    return gold_items, gold_labels


def _modelled_labels(labels: np.ndarray, gold_labels: np.ndarray, n_labels: int) -> tuple[np.ndarray, int]:
    """The labels in the model, as crowd-kit orders its columns: those given (sorted), then those only in gold
    (in order of first appearance); and how many were given."""
    given = np.flatnonzero(np.bincount(labels, minlength=n_labels))
    gold_only = [label for label in dict.fromkeys(gold_labels.tolist()) if label not in set(given.tolist())]
    return np.concatenate([given, np.array(gold_only, dtype=np.int64)]), len(given)


def _model_data(
    items: np.ndarray, workers: np.ndarray, given: np.ndarray, n_items: int, n_workers: int, n_modelled: int
) -> _Data:
    by_item = np.argsort(items, kind="stable")  # an item's labels side by side: the per-item sums read memory in order
    items, given = items[by_item], given[by_item]
    cell = workers[by_item] * n_modelled + given
    present = np.bincount(cell, minlength=n_workers * n_modelled) > 0
    return _Data(items, given, cell, present, n_items, n_workers, n_modelled)


def _majority_shares(data: _Data) -> np.ndarray:
    """Each item's share of each label among its labels (crowd-kit starts from its MajorityVote probabilities)."""
    votes = np.bincount(data.given * data.n_items + data.items, minlength=data.n_modelled * data.n_items)
    votes = votes.reshape(data.n_modelled, data.n_items).astype(float)
    return votes / votes.sum(axis=0)


def _starting_priors(posteriors: np.ndarray, gold: np.ndarray, n_given: int) -> np.ndarray:
    """The mean starting posterior; for a label only in gold, crowd-kit's mean over the cells its clamping
    defined: the column appears when the walk over gold labels reaches that label, so items clamped before it
    hold no value there (NaN, which the mean skips)."""
    priors = posteriors.mean(axis=1)
    walk = {label: step for step, label in enumerate(dict.fromkeys(gold.tolist()))}
    steps = np.array([walk[label] for label in gold.tolist()], dtype=np.int64)
    for label in range(n_given, posteriors.shape[0]):
        priors[label] = np.count_nonzero(gold == label) / np.count_nonzero(steps >= walk[label])
    return priors


def _sums_by(index: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray:
    """``(n_rows_of_weights, n)``: each row of ``weights`` summed by ``index``, one :func:`numpy.bincount` a row."""
    return np.stack([np.bincount(index, weights=row, minlength=n) for row in weights])


def _m_step(data: _Data, posteriors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The expected counts ``(true label, cell)`` and from them the confusion matrices as crowd-kit makes them:
    counts floored at EPS in the cells that occur (a label the worker never gave stays at 0), normalised over the
    labels given for each worker and true label. Also their logs, 0 where a cell never occurs (never looked up)."""
    counts = _sums_by(data.cell, np.take(posteriors, data.items, axis=1), data.n_workers * data.n_modelled)
    errors = np.where(data.present, np.maximum(counts, EPS), 0.0)
    by_worker = errors.reshape(data.n_modelled, data.n_workers, data.n_modelled)
    errors = (by_worker / by_worker.sum(axis=2, keepdims=True)).reshape(counts.shape)
    log_errors = np.log(errors, out=np.zeros_like(errors), where=data.present)
    return counts, errors, log_errors


def _e_step(data: _Data, priors: np.ndarray, log_errors: np.ndarray) -> np.ndarray:
    """Posteriors from the priors and the workers' confusion matrices, in log space, each item shifted by its
    maximum before exponentiating so that long products do not underflow."""
    log_likelihood = _sums_by(data.items, np.take(log_errors, data.cell, axis=1), data.n_items)
    log_likelihood += np.log(np.maximum(priors, EPS))[:, None]
    scaled = np.exp(log_likelihood - log_likelihood.max(axis=0))
    return scaled / scaled.sum(axis=0)


def _evidence_lower_bound(
    posteriors: np.ndarray, priors: np.ndarray, counts: np.ndarray, log_errors: np.ndarray
) -> float:
    """crowd-kit's loss: the expected joint log-likelihood, with the log prior counted once per label (not once
    per item), plus the posteriors' entropy (posteriors floored at EPS). The joint term is summed by cell from the
    M-step's expected counts, which is the same sum over the labels."""
    joint = float(np.sum(counts * log_errors)) + float(counts.sum(axis=1) @ np.log(np.maximum(priors, EPS)))
    floored = np.maximum(posteriors, EPS)
    return joint - float(np.sum(floored * np.log(floored)))


def _in_all_labels(
    data: _Data,
    modelled: np.ndarray,
    n_labels: int,
    posteriors: np.ndarray,
    priors: np.ndarray,
    errors: np.ndarray,
    history: tuple[float, ...],
) -> DawidSkeneFit:
    """The fit over every label code, the labels outside the model at 0; errors as (worker, true, given)."""
    all_posteriors = np.zeros((data.n_items, n_labels))
    all_posteriors[:, modelled] = posteriors.T
    all_priors = np.zeros(n_labels)
    all_priors[modelled] = priors
    all_errors = np.zeros((data.n_workers, n_labels, n_labels))
    by_worker = errors.reshape(data.n_modelled, data.n_workers, data.n_modelled).transpose(1, 0, 2)
    all_errors[:, modelled[:, None], modelled[None, :]] = by_worker
    return DawidSkeneFit(all_posteriors, all_priors, all_errors, len(history), history)
