"""Kendall's W (tie-corrected) and mean pairwise Kendall tau-b between rankers."""

from __future__ import annotations

import warnings
from fractions import Fraction
from math import sqrt

import numpy as np
import pandas as pd
import pytest
from scipy.stats import friedmanchisquare, kendalltau

from stats.rankings import kendall_w, kendall_w_blocks, mean_pairwise_tau_b


def frame(rankings: dict) -> pd.DataFrame:
    """{item: {ranker: [rank of answer a0, a1, ...]}} -> long rows (None = answer not ranked)."""
    rows = []
    for item, by_ranker in rankings.items():
        for ranker, ranks in by_ranker.items():
            rows += [(item, ranker, f"a{j}", r) for j, r in enumerate(ranks) if r is not None]
    return pd.DataFrame(rows, columns=["item", "annotator", "answer", "rank"])


def test_w_by_hand_without_ties():
    # rank sums R = (1+1+2, 2+3+1, 3+2+3, 4+4+4) = (4, 6, 8, 12); mean 7.5; S = 12.25+2.25+0.25+20.25 = 35
    # W = 12 S / (m^2 (n^3 - n)) = 420 / (9 * 60) = 7/9
    res = kendall_w(frame({"q": {"A": [1, 2, 3, 4], "B": [1, 3, 2, 4], "C": [2, 1, 3, 4]}}), n_resamples=0)
    assert res.per_item.loc["q", "value"] == pytest.approx(7 / 9, abs=1e-15)
    assert res.pooled.value == pytest.approx(7 / 9, abs=1e-15)


def test_w_by_hand_with_ties():
    # B ties a0 and a1 (both given rank 1 -> average 1.5); A: 1 2 3 4; C: 2 1 4 3
    # R = (1+1.5+2, 2+1.5+1, 3+3+4, 4+4+3) = (4.5, 4.5, 10, 11); mean 7.5; S = 9+9+6.25+12.25 = 36.5
    # ties: B has one group of t=2 -> T = 2^3 - 2 = 6; W = 12*36.5 / (9*60 - 3*6) = 438 / 522
    res = kendall_w(frame({"q": {"A": [1, 2, 3, 4], "B": [1, 1, 3, 4], "C": [2, 1, 4, 3]}}), n_resamples=0)
    assert res.pooled.value == pytest.approx(float(Fraction(438, 522)), abs=1e-15)


@pytest.mark.parametrize("seed", range(5))
def test_w_equals_tie_corrected_friedman_over_m_n_minus_1(seed):
    rng = np.random.default_rng(seed)
    m, n = 4, 6
    ranks = rng.integers(1, 5, size=(m, n))  # many ties
    w = kendall_w(frame({"q": {f"r{i}": list(ranks[i]) for i in range(m)}}), n_resamples=0).pooled.value
    chi2 = friedmanchisquare(*[ranks[:, j] for j in range(n)]).statistic
    assert w == pytest.approx(chi2 / (m * (n - 1)), abs=1e-12)


def test_w_perfect_and_reversed():
    perfect = kendall_w(frame({"q": {"A": [1, 2, 3], "B": [1, 2, 3]}}), n_resamples=0).pooled.value
    reversed_ = kendall_w(frame({"q": {"A": [1, 2, 3], "B": [3, 2, 1]}}), n_resamples=0).pooled.value
    assert perfect == 1.0 and reversed_ == 0.0


def test_w_pooled_is_mean_over_questions_with_interval():
    data = {
        "q1": {"A": [1, 2, 3, 4], "B": [1, 3, 2, 4], "C": [2, 1, 3, 4]},  # 7/9
        "q2": {"A": [1, 2, 3], "B": [1, 2, 3]},  # 1
        "q3": {"A": [1, 2, 3], "B": [3, 2, 1]},  # 0
    }
    res = kendall_w(frame(data))
    assert res.pooled.value == pytest.approx((7 / 9 + 1 + 0) / 3, abs=1e-15)
    assert res.pooled.n_items == 3
    assert res.pooled.ci[0] <= res.pooled.value <= res.pooled.ci[1]


def test_incomplete_ranking_keeps_common_answers_and_reranks():
    # C did not rank a2: a2 is dropped for everyone and ranks re-ranked (A: 1 2 _ 3 ; B 1 3 _ 2 ; C 2 1 _ 3)
    partial = kendall_w(frame({"q": {"A": [1, 2, 3, 4], "B": [1, 4, 2, 3], "C": [2, 1, None, 3]}}), n_resamples=0)
    full = kendall_w(frame({"q": {"A": [1, 2, 3], "B": [1, 3, 2], "C": [2, 1, 3]}}), n_resamples=0)
    assert partial.pooled.value == pytest.approx(full.pooled.value, abs=1e-15)
    assert partial.per_item.loc["q", "n_answers"] == 3
    assert any("left out" in n for n in partial.pooled.notes)


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"q": {"A": [1, 2, 3]}}, "only one ranker"),
        ({"q": {"A": [1], "B": [1]}}, "fewer than two answers"),
        ({"q": {"A": [1, 1, 1], "B": [1, 1, 1]}}, "tied all answers"),
    ],
)
def test_w_undefined_cases(data, fragment):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = kendall_w(frame(data))
        tau = mean_pairwise_tau_b(frame(data))
    assert res.pooled.value is None and res.pooled.ci is None
    assert fragment in res.per_item.loc["q", "undefined_reason"]
    assert fragment in res.pooled.undefined_reason
    assert tau.pooled.value is None


def test_blocks_vectorised_matches_single():
    rng = np.random.default_rng(3)
    r = rng.permuted(np.tile(np.arange(1.0, 6.0), (7, 3, 1)), axis=2)
    many = kendall_w_blocks(r)
    one = [kendall_w_blocks(r[i : i + 1])[0] for i in range(7)]
    assert many == pytest.approx(one, abs=1e-15)


def test_tau_b_by_hand():
    # A 1 2 3 4 vs B 1 3 2 4: 5 concordant, 1 discordant pair -> (5 - 1) / 6
    res = mean_pairwise_tau_b(frame({"q": {"A": [1, 2, 3, 4], "B": [1, 3, 2, 4]}}), n_resamples=0)
    assert res.pooled.value == pytest.approx(2 / 3, abs=1e-15)
    # with a tie: A 1 2 3 vs B 1 1 3: n_c = 2, n_d = 0, n0 = 3, ties in B n2 = 1 -> 2 / sqrt(3 * 2)
    tied = mean_pairwise_tau_b(frame({"q": {"A": [1, 2, 3], "B": [1, 1, 3]}}), n_resamples=0)
    assert tied.pooled.value == pytest.approx(2 / sqrt(6), abs=1e-15)


def test_tau_mean_over_pairs_then_questions():
    data = {
        "q1": {"A": [1, 2, 3], "B": [1, 2, 3], "C": [3, 2, 1]},
        "q2": {"A": [1, 2, 3, 4], "B": [1, 3, 2, 4]},
    }
    res = mean_pairwise_tau_b(frame(data), n_resamples=0)
    # q1 pairs: AB 1, AC -1, BC -1 -> -1/3 ; q2: 2/3 ; mean of questions = 1/6
    assert res.per_item.loc["q1", "value"] == pytest.approx(-1 / 3, abs=1e-15)
    assert res.pooled.value == pytest.approx(1 / 6, abs=1e-15)
    ref = kendalltau([1, 2, 3, 4], [1, 3, 2, 4], variant="b").statistic
    assert res.per_item.loc["q2", "value"] == pytest.approx(ref, abs=1e-15)


def test_bad_rank_is_an_error():
    df = frame({"q": {"A": [1, 2], "B": [1, 2]}})
    df["rank"] = df["rank"].astype(object)
    df.loc[1, "rank"] = "second"
    with pytest.raises(ValueError, match="second"):
        kendall_w(df)
