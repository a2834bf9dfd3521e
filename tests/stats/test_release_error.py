"""The number of released items that are probably wrong: the hand-computed answer where the model's parameters are
pinned by the data, the exact cases (gold, nothing released, a wrong label nobody gave), monotonicity, the bounds,
refused inputs, and the interval's coverage over vetting rounds simulated from a known model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stats.release_error import wrong_items_estimate

CORRECT, INCORRECT = 0, 1


def one_reviewer(*, gold_correct_passed=900, gold_wrong_passed=200, passed=8400, flagged=1600):
    """One reviewer (worker 0): 1,000 correct gold items (``gold_correct_passed`` called correct) and 1,000 planted
    errors (``gold_wrong_passed`` called correct), then ``passed`` + ``flagged`` items labelled once, the first
    ``passed`` called correct. Returns the labels, the gold and the codes of the items called correct."""
    gold_truth = [CORRECT] * 1000 + [INCORRECT] * 1000
    gold_label = (
        [CORRECT] * gold_correct_passed
        + [INCORRECT] * (1000 - gold_correct_passed)
        + [CORRECT] * gold_wrong_passed
        + [INCORRECT] * (1000 - gold_wrong_passed)
    )
    labels = np.array(gold_label + [CORRECT] * passed + [INCORRECT] * flagged)
    n_items = len(labels)
    gold = {item: truth for item, truth in enumerate(gold_truth)}
    called_correct = np.arange(2000, 2000 + passed)
    return labels, gold, called_correct, n_items


def estimate_one_reviewer(n_draws=1000, **counts):
    labels, gold, called_correct, n_items = one_reviewer(**counts)
    return wrong_items_estimate(
        np.arange(n_items),
        np.zeros(n_items, dtype=int),
        labels,
        n_items=n_items,
        n_workers=1,
        n_labels=2,
        released=called_correct,
        wrong_label=INCORRECT,
        true_labels=gold,
        n_draws=n_draws,
        seed=7,
    )


def test_one_reviewer_of_known_confusion_gives_the_hand_computed_posterior_sum():
    # The gold pins the reviewer: right on 90 % of correct items, passes 20 % of wrong ones. The 10,000 items they
    # labelled once pin the prior: 84 % called correct = 0.2 p + 0.9 (1 - p), so p = 0.06 / 0.7. Each item called
    # correct is wrong with chance 0.2 p / 0.84, and 8,400 were released.
    prior_wrong = 0.06 / 0.7
    by_hand = 8400 * (0.2 * prior_wrong / 0.84)  # 171.4
    result = estimate_one_reviewer()
    assert result["mean"] == pytest.approx(by_hand, rel=0.05)
    assert result["low"] < by_hand < result["high"]
    assert result["items"] == 8400
    # Not the binomial's width alone (±2 sd of 8,400 draws at 2 % is ±26): the prior rests on 0.9 - 0.84, a
    # difference known from 1,000 gold items to about ±0.01, or ±17 %; with the pass rate's ±6 % and the draws the
    # count has an sd of about 34, and a 95 % interval about four of them wide.
    assert 100 < result["high"] - result["low"] < 170


def test_a_reviewer_who_passes_more_wrong_items_leaves_more_of_them_released():
    careful = estimate_one_reviewer(gold_wrong_passed=100, n_draws=300)
    usual = estimate_one_reviewer(gold_wrong_passed=200, n_draws=300)
    careless = estimate_one_reviewer(gold_wrong_passed=400, n_draws=300)
    assert careful["mean"] < usual["mean"] < careless["mean"]


def test_more_items_flagged_means_a_larger_prior_of_wrong_items_and_more_of_them_released():
    fewer = estimate_one_reviewer(passed=8600, flagged=1400, n_draws=300)
    more = estimate_one_reviewer(passed=8200, flagged=1800, n_draws=300)
    # Released counts differ (8,600 and 8,200): compare the share of the released items that are wrong.
    assert fewer["mean"] / 8600 < more["mean"] / 8200


def test_released_gold_items_are_counted_exactly():
    # Two workers label six gold items (three of them wrong) and two other items; released: the gold items only.
    items = np.array([0, 1, 2, 3, 4, 5, 6, 7, 0, 6])
    workers = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, 1])
    labels = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1])
    gold = {0: 0, 1: 1, 2: 1, 3: 1, 4: 0, 5: 0}
    result = wrong_items_estimate(
        items, workers, labels, n_items=8, n_workers=2, n_labels=2, released=[0, 1, 2, 3, 4, 5],
        wrong_label=INCORRECT, true_labels=gold, n_draws=200,
    )  # fmt: skip
    assert (result["mean"], result["low"], result["high"], result["items"]) == (3.0, 3.0, 3.0, 6)


def test_nothing_released_or_a_wrong_label_nobody_gave_is_zero():
    items, workers, labels = np.array([0, 1, 2]), np.array([0, 1, 0]), np.array([0, 0, 0])
    kwargs = {"n_items": 3, "n_workers": 2, "n_labels": 3}
    nobody_said_it = wrong_items_estimate(items, workers, labels, released=[0, 1, 2], wrong_label=1, **kwargs)
    assert (nobody_said_it["mean"], nobody_said_it["low"], nobody_said_it["high"]) == (0.0, 0.0, 0.0)
    assert nobody_said_it["items"] == 3
    none_released = wrong_items_estimate(items, workers, np.array([0, 1, 0]), released=[], wrong_label=1, **kwargs)
    assert (none_released["mean"], none_released["high"], none_released["items"]) == (0.0, 0.0, 0)
    assert none_released["method"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"released": [5]}, "released items"),
        ({"wrong_label": 2}, "wrong label"),
        ({"seniors": [3]}, "seniors"),
        ({"labels": np.array([0, 2])}, "labels"),
        ({"items": np.array([0])}, "same length"),
        ({"true_labels": {0: 4}}, "gold labels"),
    ],
)
def test_refused_inputs_are_named(change, message):
    arguments = {
        "items": np.array([0, 1]),
        "workers": np.array([0, 1]),
        "labels": np.array([0, 1]),
        "released": [0],
        "wrong_label": 1,
    }
    arguments.update(change)
    with pytest.raises(ValueError, match=message):
        wrong_items_estimate(n_items=2, n_workers=2, n_labels=2, **arguments)


# -- coverage over simulated vetting rounds ----------------------------------------------------------------------


def vetting_round(rng, *, n_items, n_reviewers, wrong_share, accuracy, second_share, adjudicator_accuracy=0.98):
    """A vetting round drawn from a known model, as the portal runs one: every item reviewed once, a share reviewed
    again by someone else, disagreements decided by an adjudicator (worker ``n_reviewers``); 5 % of the items are
    gold (half of them planted errors), each reviewer answering a gold item on one request in ten. Reviewers give
    the truth with their accuracy, else the other verdict. Returns the estimator's inputs and the true count."""
    n_gold = n_items // 20
    truth = (rng.random(n_items) < wrong_share).astype(int)
    truth[:n_gold] = np.arange(n_gold) % 2
    reviewer_accuracy = rng.uniform(*accuracy, size=n_reviewers)
    rows: list[tuple[int, int, int]] = []
    final = {}

    def label(worker, item, right):
        said = truth[item] if rng.random() < right else 1 - truth[item]
        rows.append((item, worker, said))
        return said

    answered = [set() for _ in range(n_reviewers)]
    for item in range(n_gold, n_items):
        first = int(rng.integers(n_reviewers))
        if rng.random() < 0.1 and len(answered[first]) < n_gold:
            gold_item = int(rng.choice(sorted(set(range(n_gold)) - answered[first])))
            answered[first].add(gold_item)
            label(first, gold_item, reviewer_accuracy[first])
        verdict = label(first, item, reviewer_accuracy[first])
        if rng.random() < second_share:
            second = (first + 1 + int(rng.integers(n_reviewers - 1))) % n_reviewers
            if label(second, item, reviewer_accuracy[second]) != verdict:
                verdict = label(n_reviewers, item, adjudicator_accuracy)
        final[item] = verdict
    items, workers, labels = (np.array(column) for column in zip(*rows, strict=True))
    # Codes for the labelled items only (a gold item nobody answered has no label).
    labelled, codes = np.unique(items, return_inverse=True)
    code_of = {int(item): code for code, item in enumerate(labelled)}
    released = [item for item, verdict in final.items() if verdict == CORRECT]
    inputs = {
        "items": codes,
        "workers": workers,
        "labels": labels,
        "n_items": len(labelled),
        "n_workers": n_reviewers + 1,
        "n_labels": 2,
        "released": [code_of[item] for item in released],
        "wrong_label": INCORRECT,
        "true_labels": {code_of[item]: int(truth[item]) for item in range(n_gold) if item in code_of},
        "seniors": [n_reviewers],
    }
    return inputs, int(truth[released].sum())


def test_the_interval_covers_the_true_count_in_nine_rounds_of_ten_and_is_not_trivially_wide():
    rng = np.random.default_rng(20250607)
    covered, widths = 0, []
    for _ in range(10):
        inputs, true_count = vetting_round(
            rng,
            n_items=int(rng.integers(800, 1200)),
            n_reviewers=int(rng.integers(6, 12)),
            wrong_share=float(rng.uniform(0.02, 0.2)),
            accuracy=(0.65, 0.95),
            second_share=0.45,
        )
        result = wrong_items_estimate(**inputs, seed=int(rng.integers(1 << 31)))
        assert 0 <= result["low"] <= result["mean"] <= result["high"] <= result["items"]
        covered += result["low"] <= true_count <= result["high"]
        widths.append((result["high"] - result["low"], 8 * math.sqrt(max(result["mean"], 4)) + 4))
    assert covered >= 9
    assert all(width <= bound for width, bound in widths), widths
