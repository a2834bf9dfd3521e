"""Style-controlled Bradley-Terry: style features, the fit against scikit-learn, and a length-biased ranker."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from stats.style import answer_style, comparisons, design_matrix, fit_logistic, style_controlled_leaderboard


def test_answer_style_counts():
    text = "# Dosage\n\n- **Adults**: 500 mg\n- Children: 10 mg/kg\n1. Check __renal__ function\n\n阿司匹林"
    assert answer_style(text) == {"length": 16, "headers": 1, "list_items": 3, "bold": 2}
    assert answer_style("") == {"length": 0, "headers": 0, "list_items": 0, "bold": 0}
    assert answer_style("#hashtag is not a header, * not a list")["headers"] == 0


def test_logistic_fit_matches_scikit_learn():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4))
    y = (rng.random(200) < 1 / (1 + np.exp(-(x @ [1.0, -0.5, 0.2, 0.0])))).astype(float)
    w = rng.choice([0.5, 1.0], size=200)
    ridge = 0.3
    ours = fit_logistic(x, y, w, ridge=ridge)
    ref = LogisticRegression(C=1 / ridge, fit_intercept=False, tol=1e-12, max_iter=10000)
    ref.fit(x, y, sample_weight=w)
    assert ours == pytest.approx(ref.coef_[0], abs=1e-6)


def rankings_and_styles(length_bias: bool, n_items=60, seed=5):
    """Three systems; 'long' always writes the longest answer. A biased ranker prefers the longer answer."""
    rng = np.random.default_rng(seed)
    rank_rows, style_rows = [], []
    for q in range(n_items):
        lengths = {"long": 300 + rng.integers(0, 50), "mid": 120 + rng.integers(0, 50), "short": 40}
        quality = {"long": 0.0, "mid": 0.0, "short": 0.0}
        for s, n in lengths.items():
            style_rows.append({"item": f"q{q}", "system": s, "length": n, "headers": 0, "list_items": 0, "bold": 0})
        for annotator in ("r1", "r2"):
            noise = {s: rng.normal(scale=0.3) for s in lengths}
            key = {s: quality[s] + noise[s] + (lengths[s] / 100 if length_bias else 0) for s in lengths}
            order = sorted(lengths, key=lambda s: -key[s])
            for rank, s in enumerate(order, start=1):
                rank_rows.append({"item": f"q{q}", "annotator": annotator, "answer": s, "rank": rank, "system": s})
    return pd.DataFrame(rank_rows), pd.DataFrame(style_rows)


def test_a_length_biased_ranker_shows_a_positive_length_coefficient():
    rankings, styles = rankings_and_styles(length_bias=True)
    plain = style_controlled_leaderboard(rankings, styles, features=(), n_resamples=200)
    controlled = style_controlled_leaderboard(rankings, styles, n_resamples=200)
    plain_strength = dict(zip(plain.systems, plain.strengths, strict=True))
    assert plain_strength["long"] > plain_strength["mid"] > plain_strength["short"]
    table = controlled.coefficient_table()
    coef, lo, hi = table["length"]
    assert coef > 0 and lo > 0  # longer answers win at equal strength, and the interval excludes 0
    spread = np.ptp(controlled.strengths)
    assert spread < np.ptp(plain.strengths)  # once length is accounted for, the systems are much closer


def test_no_bias_no_length_effect():
    rankings, styles = rankings_and_styles(length_bias=False, n_items=80)
    controlled = style_controlled_leaderboard(rankings, styles, n_resamples=200)
    coef, lo, hi = controlled.coefficient_table()["length"]
    assert lo < 0 < hi


def test_ties_are_two_half_rows_and_the_design_is_plus_minus_one():
    rankings = pd.DataFrame(
        [
            {"item": "q", "annotator": "r", "answer": "a", "rank": 1, "system": "A"},
            {"item": "q", "annotator": "r", "answer": "b", "rank": 1, "system": "B"},
            {"item": "q", "annotator": "r", "answer": "c", "rank": 3, "system": "C"},
        ]
    )
    comps = comparisons(rankings, None, features=())
    assert sorted(comps.weight.tolist()) == [0.5, 0.5, 1.0, 1.0]
    x = design_matrix(comps)
    assert (x.sum(axis=1) == 0).all() and (np.abs(x).sum(axis=1) == 2).all()


def test_missing_style_refused():
    rankings, styles = rankings_and_styles(length_bias=False, n_items=3)
    with pytest.raises(ValueError, match="no style features"):
        style_controlled_leaderboard(rankings, styles[styles["system"] != "mid"], n_resamples=0)


def test_a_feature_no_answer_differs_in_is_undefined_not_zero():
    rankings, styles = rankings_and_styles(length_bias=True, n_items=20)
    controlled = style_controlled_leaderboard(rankings, styles, n_resamples=50)
    table = controlled.coefficient_table()
    assert np.isnan(table["headers"][0]) and np.isnan(table["headers"][1])
    assert table["length"][0] > 0


def _row_wise_fit(comps, item_weight, ridge):
    """The fit as first written: every comparison's row and its mirror, at half weight (the reference)."""
    x = design_matrix(comps)
    w = comps.weight * item_weight[comps.item]
    coef = fit_logistic(np.vstack([x, -x]), np.r_[np.ones(len(x)), np.zeros(len(x))], np.r_[w, w] / 2.0, ridge=ridge)
    s = len(comps.systems)
    coef[:s] -= coef[:s].mean()
    return coef


@pytest.mark.parametrize("features", [(), ("length",)])
def test_grouped_binomial_fit_equals_the_row_wise_fit_on_every_resample(features):
    from stats.bootstrap import percentile_interval, resample_counts

    rankings, styles = rankings_and_styles(length_bias=True, n_items=40)
    rankings.loc[rankings.index[::7], "rank"] = 1.0  # some ties
    comps = comparisons(rankings, styles, features=features)
    counts = resample_counts(len(comps.items), 30, 11)
    old = np.stack([_row_wise_fit(comps, row, 0.01) for row in counts])
    board = style_controlled_leaderboard(rankings, styles, features=features, n_resamples=30, seed=11)
    point = _row_wise_fit(comps, np.ones(len(comps.items)), 0.01)
    s = len(comps.systems)
    assert board.strengths == pytest.approx(point[:s], abs=1e-10)
    lo, hi = percentile_interval(old)
    assert board.strength_ci == pytest.approx(np.column_stack([lo, hi])[:s], abs=1e-10)
    if features:
        assert board.coefficients == pytest.approx(point[s:], abs=1e-10)
        assert board.coefficient_ci == pytest.approx(np.column_stack([lo, hi])[s:], abs=1e-10)


def test_the_style_section_pairs_once_and_reports_the_same_leaderboards():
    """The report's style section pairs the rankings once for both fits and draws no resamples for the plain
    strengths (it reports none): the strengths, intervals and coefficients are those of the two leaderboards
    computed on their own."""
    from evaluation.judges import style_section
    from stats.style import STYLE_FEATURES

    rankings, styles = rankings_and_styles(length_bias=True, n_items=40, seed=9)
    section = style_section(rankings, styles, n_resamples=120, seed=4)
    plain = style_controlled_leaderboard(rankings, styles, features=(), n_resamples=120, seed=4)
    controlled = style_controlled_leaderboard(rankings, styles, features=STYLE_FEATURES, n_resamples=120, seed=4)
    assert section["plain_strengths"] == {s: float(v) for s, v in zip(plain.systems, plain.strengths, strict=True)}
    assert section["style_controlled_strengths"] == {
        s: float(v) for s, v in zip(controlled.systems, controlled.strengths, strict=True)
    }
    assert section["style_controlled_strengths_ci"] == {
        s: [float(lo), float(hi)] for s, (lo, hi) in zip(controlled.systems, controlled.strength_ci, strict=True)
    }
    length = section["style_coefficients"]["length"]
    assert length["value"] == float(controlled.coefficients[0]) and length["ci"][0] > 0
    assert section["style_coefficients"]["headers"] == {"value": None, "ci": None}  # never differs: undefined
