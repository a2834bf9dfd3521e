"""Dawid–Skene: the same posteriors, priors, confusion matrices and iteration count as crowd-kit 1.4.2's
``DawidSkene(n_iter=100, tol=1e-5)`` (the reference, run here on the same labels), on hand-built and simulated label
sets with and without gold; the edges crowd-kit has a rule for; the Jeffreys intervals on a hand-counted case."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import DawidSkene
from scipy.special import betainc

from stats.dawid_skene import accuracy, confusion_intervals, fit, jeffreys_interval

TOL = 1e-4

# crowd-kit 1.4.2 uses pandas' inplace= and copy= keywords, which pandas 3.1 deprecates
pytestmark = pytest.mark.filterwarnings("ignore::Warning:crowdkit")


def crowd_kit(items, workers, labels, *, n_items, n_workers, n_labels, gold=None):
    """crowd-kit's fit as dense arrays in this module's layout: errors (worker, true, given), 0 where crowd-kit
    has no cell (a label the worker never gave, a label crowd-kit never saw)."""
    data = pd.DataFrame({"task": items, "worker": workers, "label": labels})
    model = DawidSkene(n_iter=100, tol=1e-5).fit(data, pd.Series(gold) if gold else None)
    posteriors, priors = np.zeros((n_items, n_labels)), np.zeros(n_labels)
    errors = np.zeros((n_workers, n_labels, n_labels))
    for label in model.probas_.columns:
        posteriors[model.probas_.index.to_numpy(dtype=int), int(label)] = model.probas_[label].to_numpy()
        priors[int(label)] = model.priors_[label]
    for (worker, given), row in model.errors_.iterrows():
        for true, p in row.items():
            errors[int(worker), int(true), int(given)] = p
    return posteriors, priors, errors, len(model.loss_history_)


def assert_same_as_crowd_kit(items, workers, labels, *, n_labels, gold=None):
    items, workers, labels = (np.asarray(a) for a in (items, workers, labels))
    sizes = {"n_items": int(items.max()) + 1, "n_workers": int(workers.max()) + 1, "n_labels": n_labels}
    got = fit(items, workers, labels, true_labels=gold, **sizes)
    posteriors, priors, errors, iterations = crowd_kit(items, workers, labels, gold=gold, **sizes)
    assert got.iterations == iterations == len(got.loss_history)
    np.testing.assert_allclose(got.posteriors, posteriors, atol=TOL, rtol=0)
    np.testing.assert_allclose(got.priors, priors, atol=TOL, rtol=0)
    np.testing.assert_allclose(got.errors, errors, atol=TOL, rtol=0)
    return got


def simulated(seed, *, n_items=150, n_workers=6, n_labels=3, max_per_item=3, gold_share=0.0):
    """Items with 1 to ``max_per_item`` labels from workers of varied accuracy; worker 0 labels at random."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(n_labels, n_items, p=np.r_[0.6, np.full(n_labels - 1, 0.4 / (n_labels - 1))])
    skill = rng.uniform(0.55, 0.95, n_workers)
    skill[0] = 0.0  # a spammer: never the truth on purpose, a uniformly random label always
    rows = []
    for item in range(n_items):
        for worker in rng.choice(n_workers, rng.integers(1, max_per_item + 1), replace=False):
            right = rng.random() < skill[worker]
            rows.append((item, worker, truth[item] if right else rng.integers(n_labels)))
    items, workers, labels = np.array(rows).T
    gold_items = rng.choice(n_items, int(gold_share * n_items), replace=False)
    gold = {int(i): int(truth[i]) for i in gold_items}
    return items, workers, labels, gold


# Four items, two workers: worker 0 gives both labels, worker 1 gives both; item 3 has one label only.
ITEMS = [0, 0, 1, 1, 2, 2, 3]
WORKERS = [0, 1, 0, 1, 0, 1, 0]
LABELS = [0, 0, 1, 0, 1, 1, 0]


def test_hand_built_without_gold():
    got = assert_same_as_crowd_kit(ITEMS, WORKERS, LABELS, n_labels=2)
    # item 1: one vote each, and the two workers' confusion matrices mirror each other there: a coin toss
    assert got.posteriors[1] == pytest.approx([0.5, 0.5])
    assert got.errors.sum(axis=2) == pytest.approx(np.ones((2, 2)))


def test_hand_built_with_gold():
    got = assert_same_as_crowd_kit(ITEMS, WORKERS, LABELS, n_labels=2, gold={1: 1, 3: 1})
    assert got.posteriors[[1, 3]].tolist() == [[0.0, 1.0], [0.0, 1.0]]  # gold is clamped, not weighed


@pytest.mark.parametrize("seed", [0, 4])
@pytest.mark.parametrize("gold_share", [0.0, 0.15])
def test_simulated_with_a_spammer_and_single_label_items(seed, gold_share):
    items, workers, labels, gold = simulated(seed, gold_share=gold_share)
    assert (np.bincount(items) == 1).any()  # items with a single label are in every set
    got = assert_same_as_crowd_kit(items, workers, labels, n_labels=3, gold=gold or None)
    assert got.iterations < 100  # it stopped by the tolerance, so the stopping rule itself was compared
    assert accuracy(got).argmin() == 0  # the spammer is found


def test_a_reviewer_with_one_label_only():
    items, workers, labels, _ = simulated(0)
    labels = np.where(workers == 2, 0, labels)  # worker 2 always says label 0
    got = assert_same_as_crowd_kit(items, workers, labels, n_labels=3)
    # crowd-kit keeps a cell only for labels the worker gave: every true label leads to label 0, certainly
    assert got.errors[2, :, 0] == pytest.approx([1.0, 1.0, 1.0])
    assert got.errors[2, :, 1:].max() == 0.0


def test_a_label_used_by_one_reviewer_only():
    items, workers, labels, _ = simulated(3)
    labels = np.where((labels == 2) & (workers != 1), 0, labels)
    assert set(workers[labels == 2]) == {1}
    got = assert_same_as_crowd_kit(items, workers, labels, n_labels=3)
    assert got.errors[np.arange(got.errors.shape[0]) != 1][:, :, 2].max() == 0.0


def test_a_class_never_in_gold():
    items, workers, labels, gold = simulated(4, gold_share=0.3)
    gold = {item: label for item, label in gold.items() if label != 2}
    assert 2 in labels and 2 not in gold.values()
    assert_same_as_crowd_kit(items, workers, labels, n_labels=3, gold=gold)


@pytest.mark.parametrize("gold", [{0: 2, 2: 1}, {2: 1, 0: 2}, {0: 2, 1: 3, 2: 0}])
def test_a_label_only_in_gold_joins_the_model_as_in_crowd_kit(gold):
    # crowd-kit adds the column part-way through clamping, so its starting prior depends on the gold's order
    got = assert_same_as_crowd_kit(ITEMS, WORKERS, LABELS, n_labels=4, gold=gold)
    assert got.posteriors[0, 2] == 1.0


def test_a_label_code_nobody_used_is_outside_the_model():
    got = fit(
        np.array(ITEMS), np.array(WORKERS), np.array(LABELS), n_items=4, n_workers=2, n_labels=3
    )  # label 2 exists as a code only
    reference = fit(np.array(ITEMS), np.array(WORKERS), np.array(LABELS), n_items=4, n_workers=2, n_labels=2)
    assert got.posteriors[:, 2].max() == 0.0 and got.priors[2] == 0.0 and got.errors[:, 2, :].max() == 0.0
    np.testing.assert_allclose(got.posteriors[:, :2], reference.posteriors)


def test_the_iteration_cap_and_the_loss():
    items, workers, labels, _ = simulated(0)
    capped = fit(items, workers, labels, n_items=150, n_workers=6, n_labels=3, n_iter=3)
    assert capped.iterations == 3 and len(capped.loss_history) == 3
    full = fit(items, workers, labels, n_items=150, n_workers=6, n_labels=3)
    assert full.loss_history[:3] == pytest.approx(capped.loss_history)
    assert full.loss_history[-1] - full.loss_history[-2] < 1e-5 <= full.loss_history[-2] - full.loss_history[-3]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"items": np.array([0, 0, 1, 1, 2, 2, 9])}, "items must be codes"),
        ({"labels": np.array([0, 0, 1, 0, 1, 1, -1])}, "labels must be codes"),
        ({"n_items": 5}, "item 4 has no label"),
        ({"n_workers": 3}, "worker 2 has no label"),
        ({"items": np.array([0.0] * 7)}, "integer codes"),
        ({"true_labels": {7: 0}}, "gold items"),
        ({"true_labels": {0: 5}}, "gold labels"),
        (
            {"items": np.array([], dtype=int), "workers": np.array([], dtype=int), "labels": np.array([], dtype=int)},
            "no labels",
        ),
    ],
)
def test_refuses_codes_it_cannot_fit(change, message):
    args = {"items": np.array(ITEMS), "workers": np.array(WORKERS), "labels": np.array(LABELS)}
    sizes = {"n_items": 4, "n_workers": 2, "n_labels": 2}
    args.update({k: v for k, v in change.items() if k in args})
    sizes.update({k: v for k, v in change.items() if k not in args})
    with pytest.raises(ValueError, match=message):
        fit(**args, **sizes)


def test_jeffreys_intervals_on_a_hand_counted_case():
    # Every item is gold, so the posteriors are exact and the expected counts are plain counts.
    # Worker 0 labels items 0-3 (truth 0, 0, 0, 1) as 0, 0, 1, 1; worker 1 labels items 0-2 (truth 0) as 0, 0, 0.
    items = np.array([0, 1, 2, 3, 0, 1, 2])
    workers = np.array([0, 0, 0, 0, 1, 1, 1])
    labels = np.array([0, 0, 1, 1, 0, 0, 0])
    gold = {0: 0, 1: 0, 2: 0, 3: 1}
    result = fit(items, workers, labels, n_items=4, n_workers=2, n_labels=2, true_labels=gold)
    np.testing.assert_allclose(result.errors[0], [[2 / 3, 1 / 3], [0.0, 1.0]], atol=1e-9)
    # priors 3/4, 1/4; worker 1 never gave label 1, so it is never right on a true 1
    assert accuracy(result) == pytest.approx([3 / 4 * 2 / 3 + 1 / 4 * 1.0, 3 / 4 * 1.0 + 1 / 4 * 0.0], abs=1e-9)

    got = confusion_intervals(result, items, workers, labels)
    # (worker, true, given) -> (x, n), counted by hand from the lists above
    counted = {(0, 0, 0): (2, 3), (0, 0, 1): (1, 3), (0, 1, 1): (1, 1), (1, 0, 0): (3, 3)}
    for (w, k, given), (x, n) in counted.items():
        a, b = x + 0.5, n - x + 0.5
        assert betainc(a, b, got.low[w, k, given]) == pytest.approx(0.025, abs=1e-9)
        if x < n:
            assert betainc(a, b, got.high[w, k, given]) == pytest.approx(0.975, abs=1e-9)
        else:  # all right: the bound is 1 (Brown, Cai & DasGupta's end rule), not the quantile below it
            assert got.high[w, k, given] == 1.0 and betainc(a, b, 0.999) < 0.975
    # worker 1 never saw a true 1: n = 0, the Jeffreys prior Beta(1/2, 1/2), whose quantile q is sin^2(pi q / 2)
    arcsine = [math.sin(math.pi * q / 2) ** 2 for q in (0.025, 0.975)]
    assert [got.low[1, 1, 0], got.high[1, 1, 0]] == pytest.approx(arcsine, abs=1e-12)
    # accuracy: worker 0 is right on 3 of 4 labels, worker 1 on 3 of 3
    assert got.share_correct == pytest.approx([3 / 4, 1.0])
    assert betainc(3.5, 1.5, got.accuracy_low[0]) == pytest.approx(0.025, abs=1e-9)
    assert betainc(3.5, 1.5, got.accuracy_high[0]) == pytest.approx(0.975, abs=1e-9)
    assert betainc(3.5, 0.5, got.accuracy_low[1]) == pytest.approx(0.025, abs=1e-9)
    assert got.accuracy_high[1] == 1.0


def test_jeffreys_interval_contains_its_share_near_the_ends():
    x = np.array([0.0, 0.0001, 9.9999, 5.0, 0.02])
    low, high = jeffreys_interval(x, np.full(5, 10.0))
    # shares 0, 1e-5 and 0.99999 lie beyond Beta's 2.5 % / 97.5 % quantiles: the bound moves to the share
    assert low[0] == 0.0 and low[1] == pytest.approx(1e-5, rel=1e-9) and high[2] == pytest.approx(0.99999, rel=1e-12)
    assert betainc(0.5001, 10.4999, 1e-5) < 0.025  # (the quantile itself is above the share)
    # elsewhere the plain quantiles
    for i in (3, 4):
        assert betainc(x[i] + 0.5, 10 - x[i] + 0.5, low[i]) == pytest.approx(0.025, abs=1e-9)
        assert betainc(x[i] + 0.5, 10 - x[i] + 0.5, high[i]) == pytest.approx(0.975, abs=1e-9)
