"""Per-pair reviewer agreement and the words for agreement strengths, against values computed by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from stats.pairs import rater_pairs, strength_of_agreement
from stats.results import StatResult

VERDICTS = ["correct", "incorrect", "cannot_tell"]
SCALE = [1, 2, 3, 4, 5]

# A and B share items 1-4; A and C share item 5 only; B and C share nothing.
RATINGS = [
    ("i1", "A", "correct", 5),
    ("i2", "A", "correct", 4),
    ("i3", "A", "incorrect", 2),
    ("i4", "A", "correct", 5),
    ("i5", "A", "correct", 4),
    ("i1", "B", "correct", 5),
    ("i2", "B", "incorrect", 3),
    ("i3", "B", "incorrect", 2),
    ("i4", "B", "correct", 4),
    ("i5", "C", "correct", 3),
    ("i9", "C", "incorrect", 1),
]


def test_rater_pairs_known_answer():
    frame = pd.DataFrame(RATINGS, columns=["item", "annotator", "verdict", "relevance"])
    pairs = {
        tuple(p["pair"]): p for p in rater_pairs(frame, verdict_values=VERDICTS, relevance_values=SCALE, min_items=3)
    }
    assert set(pairs) == {("A", "B"), ("A", "C")}  # B and C have no item in common: left out

    ab = pairs[("A", "B")]
    assert ab["n_items"] == 4 and not ab["too_few_items"]
    # Same verdict on 3 of 4 items.
    assert ab["verdict_percent_agreement"]["value"] == pytest.approx(0.75)
    # p_o = 3/4; A says correct 3/4, B 2/4: p_e = 3/4 * 2/4 + 1/4 * 2/4 = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2.
    assert ab["verdict_cohen_kappa"]["value"] == pytest.approx(0.5)
    # Relevance positions A (4, 3, 1, 4), B (4, 2, 1, 3): observed mean squared difference 2/4; expected over
    # all 16 (A, B) combinations 48/16 = 3; weighted kappa = 1 - (1/2) / 3 = 5/6.
    assert ab["relevance_cohen_kappa_quadratic"]["value"] == pytest.approx(5 / 6)
    assert ab["verdict_cohen_kappa"]["n_items"] == 4

    ac = pairs[("A", "C")]
    assert ac["n_items"] == 1 and ac["too_few_items"]
    assert ac["verdict_percent_agreement"]["value"] == pytest.approx(1.0)
    assert ac["verdict_cohen_kappa"]["value"] is None and ac["verdict_cohen_kappa"]["undefined_reason"]


@pytest.mark.parametrize(
    ("kappa", "words"),
    [
        (-0.1, "poor"),
        (0.0, "slight"),
        (0.2, "slight"),
        (0.21, "fair"),
        (0.5, "moderate"),
        (0.6, "moderate"),
        (0.61, "substantial"),
        (0.8, "substantial"),
        (0.81, "almost perfect"),
        (None, None),
    ],
)
def test_landis_koch_words(kappa, words):
    assert strength_of_agreement(kappa) == words


def test_stat_result_survives_storage_with_its_counts():
    """The root of "n=0" on every bar: results were rebuilt from stored JSON without their counts."""
    original = StatResult("krippendorff_alpha", 0.61, 0.4, 0.8, n_items=17, n_raters=3, notes=("a note",))
    assert StatResult.from_dict(original.to_dict()) == original
    assert StatResult.from_dict(None, "x") == StatResult("x", None)
