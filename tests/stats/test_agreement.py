"""Known-answer tests for Krippendorff's alpha, Fleiss' kappa, Cohen's kappa and raw agreement.

Expected values come from published worked examples, from hand derivations written out beside them, or from
independent libraries (the GPL ``krippendorff`` package is a dev dependency used here only).
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from stats.agreement import (
    agreement_summary,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
)
from stats.bootstrap import percentile_interval, resample_counts
from stats.results import per_group, results_to_frame

NA = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers x 12 units, 1-5.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, 3],
    [NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NA],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA],
]


def long(matrix, raters=None) -> pd.DataFrame:
    """observers x units matrix -> long (item, annotator, value), NaN kept as missing."""
    raters = raters or [f"r{i}" for i in range(len(matrix))]
    rows = [(f"u{u:02d}", raters[r], matrix[r][u]) for r in range(len(matrix)) for u in range(len(matrix[0]))]
    return pd.DataFrame(rows, columns=["item", "annotator", "value"])


def no_warnings(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)


# ------------------------------------------------------------------------------------------- alpha


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_alpha_matches_krippendorff_2011_worked_example(level, published):
    res = krippendorff_alpha(long(K2011), level=level, n_resamples=0)
    assert round(res.value, 3) == published
    assert res.n_items == 11  # unit 12 has a single value and is not pairable
    assert res.n_raters == 4


def test_alpha_nominal_exact_from_papers_coincidence_matrix():
    # The paper's coincidence matrix (x3): diagonal 21, 30, 24, 12, 9; off-diagonal total 24/3 = 8;
    # marginals n_c = 9, 13, 10, 5, 3 and n = 40. alpha = 1 - (n-1) * 8 / (n^2 - sum n_c^2) = 1 - 312/1216.
    expected = 1 - Fraction(39 * 8, 40**2 - (81 + 169 + 100 + 25 + 9))
    res = krippendorff_alpha(long(K2011), level="nominal", n_resamples=0)
    assert res.value == pytest.approx(float(expected), abs=1e-15)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_alpha_equals_krippendorff_package_with_missing_data(level, seed):
    kd = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=40)
    data = np.clip(truth + rng.integers(-1, 2, size=(5, 40)), 1, 5).astype(float)
    data[rng.random(data.shape) < 0.3] = np.nan
    ours = krippendorff_alpha(long(data.tolist()), level=level, n_resamples=0).value
    ref = kd.alpha(reliability_data=data, level_of_measurement=level)
    assert ours == pytest.approx(ref, abs=1e-12)


def test_alpha_level_must_be_given():
    with pytest.raises(TypeError):
        krippendorff_alpha(long(K2011))  # no silent default (the krippendorff package defaults to interval)
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(long(K2011), level="nominals")


def test_ordinal_alpha_depends_only_on_order_interval_does_not():
    df = long(K2011)
    squared = df.assign(value=df["value"] ** 3)
    o1 = krippendorff_alpha(df, level="ordinal", n_resamples=0).value
    o2 = krippendorff_alpha(squared, level="ordinal", n_resamples=0).value
    i1 = krippendorff_alpha(df, level="interval", n_resamples=0).value
    i2 = krippendorff_alpha(squared, level="interval", n_resamples=0).value
    assert o1 == pytest.approx(o2, abs=1e-15)
    assert abs(i1 - i2) > 0.01


def test_string_scale_with_unused_point_gives_interval_positions():
    kd = pytest.importorskip("krippendorff")
    letters = {1: "a", 2: "b", 3: "d", 4: "e", 5: "f"}  # 'c' is never used
    df = long(K2011)
    df["value"] = df["value"].map(letters)
    res = krippendorff_alpha(df, level="interval", values=list("abcdef"), n_resamples=0)
    # positions on the full scale: a=0, b=1, d=3, e=4, f=5
    coded = [[{1: 0, 2: 1, 3: 3, 4: 4, 5: 5}.get(v, np.nan) for v in row] for row in K2011]
    assert res.value == pytest.approx(kd.alpha(reliability_data=coded, level_of_measurement="interval"), abs=1e-12)
    # ordinal alpha ignores the unused point (its marginal n_g is 0) and equals the 1..5 result
    ordinal = krippendorff_alpha(df, level="ordinal", values=list("abcdef"), n_resamples=0).value
    assert round(ordinal, 3) == 0.815


def test_value_off_the_scale_is_an_error():
    df = pd.DataFrame({"item": [1, 1], "annotator": ["a", "b"], "value": ["good", "great"]})
    with pytest.raises(ValueError, match="great"):
        krippendorff_alpha(df, level="nominal", values=["good", "okay", "bad"])


def test_duplicate_rating_is_an_error():
    df = pd.DataFrame({"item": [1, 1], "annotator": ["a", "a"], "value": [1, 2]})
    with pytest.raises(ValueError, match="duplicate"):
        percent_agreement(df)


# ------------------------------------------------------------------------------------------- degenerate

ONE_RATER = pd.DataFrame({"item": [1, 2, 3], "annotator": ["a"] * 3, "value": [1, 2, 3]})
ONE_ITEM = pd.DataFrame({"item": [1, 1, 1], "annotator": ["a", "b", "c"], "value": [1, 2, 2]})
IDENTICAL = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "annotator": ["a", "b"] * 3, "value": [2] * 6})
NO_PAIRS = pd.DataFrame({"item": [1, 2, 3], "annotator": ["a", "b", "c"], "value": [1, 2, 2]})
EMPTY = pd.DataFrame({"item": [1, 1], "annotator": ["a", "b"], "value": [np.nan, ""]})


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (ONE_RATER, "only 1 rater"),
        (ONE_ITEM, "only one item"),
        (IDENTICAL, "same value"),
        (NO_PAIRS, "no item has ratings from two"),
        (EMPTY, "rater"),
    ],
)
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_undefined_cases(data, fragment, level):
    res = no_warnings(krippendorff_alpha, data, level=level)
    assert res.value is None and res.ci is None
    assert fragment in res.undefined_reason


@pytest.mark.parametrize("data", [ONE_RATER, ONE_ITEM, IDENTICAL, NO_PAIRS, EMPTY])
def test_kappas_undefined_cases(data):
    for fn in (fleiss_kappa, cohen_kappa):
        res = no_warnings(fn, data)
        assert res.value is None and res.undefined_reason
    assert no_warnings(cohen_kappa, data, weights="quadratic").value is None


def test_raw_agreement_is_defined_for_identical_ratings_and_one_item():
    assert percent_agreement(IDENTICAL).value == 1.0
    one = percent_agreement(ONE_ITEM)
    # item (1, 2, 2): ordered agreeing pairs 2 of 3*2 = 6
    assert one.value == pytest.approx(1 / 3) and one.ci is None
    assert percent_agreement(ONE_RATER).value is None


# ------------------------------------------------------------------------------------------- Fleiss

# Wikipedia "Fleiss' kappa" worked example (Fleiss 1971 layout): 10 subjects x 14 raters, 5 categories.
WIKI_FLEISS = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)


def table_to_long(table: np.ndarray) -> pd.DataFrame:
    rows = []
    for i, counts in enumerate(table):
        codes = np.repeat(np.arange(len(counts)), counts)
        rows += [(f"s{i}", f"r{j}", int(c) + 1) for j, c in enumerate(codes)]
    return pd.DataFrame(rows, columns=["item", "annotator", "value"])


def test_fleiss_matches_wikipedia_worked_example():
    res = fleiss_kappa(table_to_long(WIKI_FLEISS), n_resamples=0)
    assert round(res.value, 3) == 0.210
    # exact: P_bar = mean_i (sum_j n_ij^2 - 14) / (14 * 13); P_e = sum_j (col_j / 140)^2
    p_bar = sum(Fraction(int((r**2).sum()) - 14, 14 * 13) for r in WIKI_FLEISS) / 10
    p_e = sum(Fraction(int(c), 140) ** 2 for c in WIKI_FLEISS.sum(axis=0))
    assert round(float(p_bar), 3) == 0.378 and round(float(p_e), 3) == 0.213  # as printed on Wikipedia
    assert res.value == pytest.approx(float((p_bar - p_e) / (1 - p_e)), abs=1e-14)
    assert res.n_items == 10


def test_fleiss_uses_only_items_with_the_modal_number_of_ratings():
    df = long(K2011)  # 8 units with 4 values, 2 with 3, 1 with 2 (unit 12 has 1)
    res = fleiss_kappa(df, n_resamples=0)
    assert res.n_items == 8
    assert any("modal 4" in n for n in res.notes)
    full = [u for u in range(12) if sum(not np.isnan(K2011[r][u]) for r in range(4)) == 4]
    table = np.array([[sum(K2011[r][u] == c for r in range(4)) for c in range(1, 6)] for u in full])
    assert res.value == pytest.approx(sm_fleiss(table), abs=1e-14)


# ------------------------------------------------------------------------------------------- Cohen


def pairs_to_long(pairs) -> pd.DataFrame:
    rows = []
    for i, (a, b) in enumerate(pairs):
        rows += [(i, "A", a), (i, "B", b)]
    return pd.DataFrame(rows, columns=["item", "annotator", "value"])


def test_cohen_wikipedia_example():
    # Wikipedia "Cohen's kappa": 50 proposals; yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o .7, p_e .5
    pairs = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    res = cohen_kappa(pairs_to_long(pairs), n_resamples=0)
    assert res.value == pytest.approx(0.4, abs=1e-14)
    assert res.n_items == 50 and res.n_raters == 2


def test_quadratic_kappa_by_hand_and_the_labels_pitfall():
    # scale good < okay < bad (positions 0, 1, 2); pairs: (g,g) (o,o) (g,o) (o,b) (b,b)  n = 5
    pairs = [("good", "good"), ("okay", "okay"), ("good", "okay"), ("okay", "bad"), ("bad", "bad")]
    # observed weighted disagreement: (g,o) 1 + (o,b) 1 = 2
    # rater A marginals g2 o2 b1, rater B g1 o2 b2; expected sum_ij w_ij a_i b_j / n:
    # a_g(b_o*1 + b_b*4) + a_o(b_g*1 + b_b*1) + a_b(b_g*4 + b_o*1) = 2*(2+8) + 2*(1+2) + 1*(4+2) = 32 -> 32/5
    expected = 1 - Fraction(2) / Fraction(32, 5)
    df = pairs_to_long(pairs)
    res = cohen_kappa(df, weights="quadratic", values=["good", "okay", "bad"], n_resamples=0)
    assert res.value == pytest.approx(float(expected), abs=1e-14)
    # without the scale, strings sort bad < good < okay, which is a different (wrong) quadratic kappa
    lexi = cohen_kappa(df, weights="quadratic", n_resamples=0).value
    assert abs(lexi - float(expected)) > 0.05
    # an unused middle point moves every distance: sklearn weights by *index* in `labels`
    y1, y2 = zip(*pairs, strict=True)
    with_gap = cohen_kappa(df, weights="quadratic", values=["good", "fine", "okay", "bad"], n_resamples=0)
    assert with_gap.value == pytest.approx(
        cohen_kappa_score(y1, y2, labels=["good", "fine", "okay", "bad"], weights="quadratic"), abs=1e-14
    )
    assert abs(with_gap.value - float(expected)) > 0.01


def test_cohen_needs_exactly_two_raters():
    res = cohen_kappa(long(K2011), n_resamples=0)
    assert res.value is None and "exactly two raters, found 4" in res.undefined_reason


# ------------------------------------------------------------------------------------------- bootstrap


def naive_resample_frames(df: pd.DataFrame, n_resamples: int, seed: int):
    items = pd.unique(df["item"])
    counts = resample_counts(len(items), n_resamples, seed)
    for row in counts.astype(int):
        parts = []
        for i, c in zip(items, row, strict=True):
            for k in range(c):
                parts.append(df[df["item"] == i].assign(item=f"{i}#{k}"))
        yield pd.concat(parts)


def test_vectorised_bootstrap_equals_naive_loop_with_reference_libraries():
    kd = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(7)
    truth = rng.integers(1, 4, size=15)
    pairs = [(t, int(np.clip(t + rng.integers(-1, 2), 1, 3))) for t in truth]
    df = pairs_to_long(pairs)
    b, seed = 60, 11
    alphas, kappas, fleiss = [], [], []
    for sample in naive_resample_frames(df, b, seed):
        wide = sample.pivot(index="annotator", columns="item", values="value").to_numpy(dtype=float)
        alphas.append(kd.alpha(reliability_data=wide, level_of_measurement="ordinal"))
        kappas.append(cohen_kappa_score(wide[0], wide[1], labels=[1, 2, 3], weights="quadratic"))
        tab = np.array([[np.sum(col == c) for c in (1, 2, 3)] for col in wide.T])
        fleiss.append(sm_fleiss(tab))
    for res, naive in [
        (krippendorff_alpha(df, level="ordinal", n_resamples=b, seed=seed), alphas),
        (cohen_kappa(df, weights="quadratic", n_resamples=b, seed=seed), kappas),
        (fleiss_kappa(df, n_resamples=b, seed=seed), fleiss),
    ]:
        lo, hi = percentile_interval(np.array(naive))
        assert res.ci == pytest.approx((lo[0], hi[0]), abs=1e-12)
        assert res.n_resamples_defined == b


def test_bootstrap_is_seeded_and_brackets_the_value():
    df = long(K2011)
    a = krippendorff_alpha(df, level="interval", seed=5)
    b = krippendorff_alpha(df, level="interval", seed=5)
    c = krippendorff_alpha(df, level="interval", seed=6)
    assert a.ci == b.ci and a.ci != c.ci
    assert a.ci[0] <= a.value <= a.ci[1]


def test_the_interval_does_not_depend_on_the_order_of_the_rows():
    """Ratings read in another row order (a query without ORDER BY) give the same figure and interval: a release
    card's stored agreement failed to match its recomputation when the database returned the reviews reordered."""
    df = long(K2011)
    first = krippendorff_alpha(df, level="ordinal", seed=5)
    for seed in range(3):
        shuffled = df.sample(frac=1.0, random_state=seed)
        assert krippendorff_alpha(shuffled, level="ordinal", seed=5).ci == first.ci
        assert fleiss_kappa(shuffled, seed=5).ci == fleiss_kappa(df, seed=5).ci


def test_summary_keys_and_quadratic_undefined_for_nominal():
    out = agreement_summary(pairs_to_long([(1, 1), (2, 2), (1, 2)]), level="nominal", n_resamples=0)
    assert set(out) == {
        "krippendorff_alpha",
        "fleiss_kappa",
        "cohen_kappa",
        "cohen_kappa_quadratic",
        "percent_agreement",
    }
    assert out["cohen_kappa_quadratic"].value is None
    assert out["percent_agreement"].value == pytest.approx(2 / 3)


def test_per_group_gives_one_result_per_qa_type():
    df = pairs_to_long([(1, 1), (2, 2), (1, 2), (1, 1), (2, 2), (2, 2)])
    df["qa_type"] = df["item"].map(lambda i: "tf" if i < 3 else "list")
    out = per_group(df.drop(columns="qa_type"), "item", percent_agreement, n_resamples=0)
    assert len(out) == 6
    by_type = per_group(df, "qa_type", cohen_kappa, n_resamples=0)
    assert set(by_type) == {"tf", "list"}
    # "list" items 3-5 agree perfectly on 1, 2, 2: p_o = 1, p_e = (1*1 + 2*2)/9 -> kappa 1
    assert by_type["list"].value == pytest.approx(1.0)
    # "tf" items 0-2: (1,1) (2,2) (1,2): p_o 2/3; A 1:2 2:1, B 1:1 2:2 -> p_e 4/9 -> (2/3-4/9)/(5/9) = 0.4
    assert by_type["tf"].value == pytest.approx(0.4, abs=1e-14)
    table = results_to_frame(by_type)
    assert list(table.index) == ["list", "tf"] and "undefined_reason" in table.columns
