"""Nugget statistics (stats/nuggets.py): consensus, system means with intervals, agreement, rank correlation.

Known answers by hand, and cross-checks with scikit-learn, scipy and the ``krippendorff`` package.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr
from sklearn.metrics import cohen_kappa_score, f1_score

from stats.agreement import cohen_kappa
from stats.bootstrap import percentile_interval, resample_counts
from stats.nuggets import (
    ORDINAL_SCALE,
    consensus_label,
    consensus_positions,
    judge_agreement,
    label_agreement,
    system_rank_correlation,
    system_scores,
    unit_consensus,
)

S, P, N = "support", "partial", "not_support"


# ------------------------------------------------------------------------------------------ consensus


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ([S, S, P], S),  # majority
        ([N, N, S], N),
        ([S], S),
        ([S, N], P),  # tie: median of 2 and 0 is 1 = partial
        ([S, P], P),  # tie: median 1.5 lies between partial and support: the stricter, partial
        ([P, N], N),  # median 0.5: not_support
        ([S, P, N], P),  # three-way tie: the middle
        ([S, S, N, N], P),
        ([S, S, P, P, N], P),  # tie of support and partial among five: median of all five is partial
        ([], None),
    ],
)
def test_consensus_label(labels, expected):
    assert consensus_label(labels) == expected


def _consensus_by_definition(labels):
    """The rule as its docstring states it, written the plain way (a Counter and the median of all positions)."""
    from collections import Counter

    counts = Counter(labels).most_common()
    if len(counts) == 1 or counts[0][1] > counts[1][1]:
        return counts[0][0]
    scale = [N, P, S]
    positions = sorted(scale.index(label) for label in labels)
    middle = len(positions) // 2
    median = positions[middle] if len(positions) % 2 else (positions[middle - 1] + positions[middle]) / 2
    return scale[int(np.floor(median))]


def test_consensus_label_is_the_rule_on_every_list_of_up_to_five_labels():
    """The counting is written for speed (a large study asks for it 400,000 times); on every list of one to five
    labels, in every order, it gives the label the rule defines."""
    from itertools import product

    for size in range(1, 6):
        for labels in product([S, P, N], repeat=size):
            assert consensus_label(list(labels)) == _consensus_by_definition(list(labels)), labels


def test_consensus_positions_is_the_rule_on_every_count_of_up_to_seven_labels():
    """The vectorised rule a whole study goes through: every (not_support, partial, support) count with one to
    seven labels gives the label the rule as written gives; a unit without a label gives -1."""
    from itertools import product

    counts = [c for c in product(range(8), repeat=3) if 1 <= sum(c) <= 7]
    positions = consensus_positions(np.array(counts))
    for count, position in zip(counts, positions, strict=True):
        labels = [label for label, k in zip(ORDINAL_SCALE, count, strict=True) for _ in range(k)]
        assert ORDINAL_SCALE[position] == _consensus_by_definition(labels), count
    assert consensus_positions(np.array([[0, 0, 0]])).tolist() == [-1]


def test_unit_consensus_is_the_rule_per_unit_sorted_by_unit():
    """Every unit once, in the order the unit tuples sort (non-ASCII and number-like keys included), with the
    consensus of its labels in any order and their count; a row with a missing key belongs to no unit."""
    rng = np.random.default_rng(5)
    rows = [
        (
            str(rng.choice(["q1", "q10", "q2", "é-item", "问题"])),
            str(rng.choice(["Model B", "model a", "reference"])),
            str(rng.choice(["n1", "n2", "n10"])),
            str(rng.choice(ORDINAL_SCALE)),
            str(rng.choice(["P1", "P2", "P3"])),
        )
        for _ in range(1500)
    ]
    labels = pd.DataFrame(
        rows + [(None, "model a", "n1", S, "P1")], columns=["item_uid", "system", "nugget_id", "label", "labeller"]
    )
    out = unit_consensus(labels)
    grouped: dict[tuple, list[str]] = {}
    for item, system, nugget, label, _ in rows:
        grouped.setdefault((item, system, nugget), []).append(label)
    expected = sorted(grouped)
    assert list(zip(out["item_uid"], out["system"], out["nugget_id"], strict=True)) == expected
    assert out["label"].tolist() == [_consensus_by_definition(grouped[key]) for key in expected]
    assert out["n_labels"].tolist() == [len(grouped[key]) for key in expected]
    assert unit_consensus(labels.iloc[:0]).empty


def test_unit_consensus_refuses_a_label_off_the_scale():
    labels = pd.DataFrame(
        {"item_uid": ["q1", "q1"], "system": ["a", "a"], "nugget_id": ["n1", "n1"], "label": [S, "maybe"]}
    )
    with pytest.raises(ValueError, match="maybe"):
        unit_consensus(labels)


def test_consensus_refuses_a_label_off_the_scale():
    with pytest.raises(ValueError, match="maybe"):
        consensus_label([S, "maybe"])


# ------------------------------------------------------------------------------------------ system scores


def test_system_scores_means_leave_out_undefined_answers():
    per_answer = pd.DataFrame(
        {
            "system": ["a", "a", "a", "b"],
            "labeller": ["dr", "dr", "dr", "dr"],
            "item_uid": ["q1", "q2", "q3", "q1"],
            "all": [0.5, 1.0, 0.25, 0.0],
            "vital": [0.75, 1.0, None, np.nan],
        }
    )
    out = system_scores(per_answer, n_resamples=200, seed=7).set_index(["system", "labeller", "score"])
    assert out.loc[("a", "dr", "all"), "mean"] == pytest.approx(1.75 / 3)
    assert out.loc[("a", "dr", "all"), "n_answers"] == 3
    assert out.loc[("a", "dr", "vital"), "mean"] == pytest.approx(0.875)
    assert out.loc[("a", "dr", "vital"), "n_answers"] == 2
    # one answer: a mean, no interval; no defined answer: no mean
    assert out.loc[("b", "dr", "all"), "mean"] == 0.0 and out.loc[("b", "dr", "all"), "ci_low"] is None
    assert out.loc[("b", "dr", "vital"), "mean"] is None and out.loc[("b", "dr", "vital"), "n_answers"] == 0
    # the interval is the percentile interval of the resampled means, with the shared seeded resamples
    values = np.array([0.5, 1.0, 0.25])
    low, high = percentile_interval(resample_counts(3, 200, 7) @ values / 3)
    assert out.loc[("a", "dr", "all"), "ci_low"] == pytest.approx(float(low[0]))
    assert out.loc[("a", "dr", "all"), "ci_high"] == pytest.approx(float(high[0]))
    assert 0.25 <= out.loc[("a", "dr", "all"), "ci_low"] <= out.loc[("a", "dr", "all"), "ci_high"] <= 1.0


def test_system_scores_needs_the_key_columns():
    with pytest.raises(ValueError, match="labeller"):
        system_scores(pd.DataFrame({"system": ["a"], "item_uid": ["q"], "all": [1.0]}))


# ------------------------------------------------------------------------------------------ agreement


def frame(rows):
    return pd.DataFrame(rows, columns=["item_uid", "system", "nugget_id", "labeller", "label"])


def test_label_agreement_ordinal_alpha_by_hand_and_against_krippendorff():
    # Units (S,S), (N,N), (S,P), (P,P): n_N 2, n_P 3, n_S 3. Ordinal δ²(P,S) = (3 + 3 − 3)² = 9,
    # δ²(N,P) = 6.25, δ²(N,S) = 30.25. D_o = 2·9/8 = 2.25; D_e = 2·(6·6.25 + 6·30.25 + 9·9)/56 = 600/56.
    # alpha = 1 − 2.25·56/600 = 0.79.
    pairs = [(S, S), (N, N), (S, P), (P, P)]
    rows = [
        ("q1", "sys", f"n{i}", who, label)
        for i, pair in enumerate(pairs)
        for who, label in zip("ab", pair, strict=True)
    ]
    rows.append(("q1", "sys", "n9", "a", S))  # a unit one labeller labelled: no information on agreement
    res = label_agreement(frame(rows), n_resamples=0)
    assert res.value == pytest.approx(0.79)
    assert res.n_items == 4 and res.n_raters == 2
    code = {N: 0, P: 1, S: 2}
    data = np.array([[code[a] for a, _ in pairs] + [2], [code[b] for _, b in pairs] + [np.nan]], dtype=float)
    assert res.value == pytest.approx(krippendorff.alpha(data, level_of_measurement="ordinal", value_domain=[0, 1, 2]))


def test_label_agreement_keeps_units_apart_across_systems_and_only_named_labellers():
    rows = [
        ("q1", "x", "n1", "a", S),
        ("q1", "x", "n1", "b", S),
        ("q1", "y", "n1", "a", N),
        ("q1", "y", "n1", "b", N),
        ("q1", "y", "n1", "judge", S),
    ]
    res = label_agreement(frame(rows), labellers=["a", "b"], n_resamples=0)
    assert res.value == pytest.approx(1.0) and res.n_items == 2 and res.n_raters == 2


HUMAN_ROWS = {
    # unit: (h1, h2, h3) — None = not labelled
    "n1": (S, S, S),
    "n2": (S, P, P),
    "n3": (N, N, S),
    "n4": (P, N, None),
    "n5": (N, N, N),
    "n6": (S, None, None),
}
JUDGE = {"n1": S, "n2": S, "n3": N, "n4": N, "n5": P, "n6": S}


def agreement_frame():
    rows = [
        ("q", "sys", unit, f"h{i + 1}", label)
        for unit, labels in HUMAN_ROWS.items()
        for i, label in enumerate(labels)
        if label
    ]
    rows += [("q", "sys", unit, "judge", label) for unit, label in JUDGE.items()]
    return frame(rows)


def test_judge_against_consensus_matches_scikit_learn():
    # consensus by hand: n1 S, n2 P (majority), n3 N, n4 tie (P, N) → N, n5 N, n6 S (one human)
    consensus = [S, P, N, N, N, S]
    judge = [JUDGE[u] for u in HUMAN_ROWS]
    out = judge_agreement(agreement_frame(), ["judge"], ["h1", "h2", "h3"], n_resamples=0)
    figures = out["judges"]["judge"]
    assert figures["n"] == 6
    assert figures["kappa"] == pytest.approx(cohen_kappa_score(consensus, judge))
    assert figures["macro_f1"] == pytest.approx(f1_score(consensus, judge, average="macro"))
    per_label = f1_score(consensus, judge, labels=[S, P, N], average=None)
    assert [figures["f1"][label] for label in (S, P, N)] == pytest.approx(list(per_label))
    # by hand: consensus S,P,N,N,N,S vs judge S,S,N,N,P,S → F1 support 0.8, partial 0, not_support 0.8
    assert [figures["f1"][label] for label in (S, P, N)] == pytest.approx([0.8, 0.0, 0.8])


def test_project_kappa_equals_scikit_learn():
    consensus = [S, P, N, N, N, S]
    judge = [JUDGE[u] for u in HUMAN_ROWS]
    pair = pd.DataFrame({"item": list(range(6)) * 2, "annotator": ["j"] * 6 + ["c"] * 6, "value": judge + consensus})
    ours = cohen_kappa(pair, values=[N, P, S], n_resamples=0).value
    assert ours == pytest.approx(cohen_kappa_score(judge, consensus))


def test_human_ceiling_is_leave_one_out():
    out = judge_agreement(agreement_frame(), ["judge"], ["h1", "h2", "h3"], n_resamples=0)
    ceiling = out["human_ceiling"]
    # h1 against the consensus of h2 and h3 on the units h1 labelled that another human labelled (n6 left out):
    # n1 S|S, n2 S|P (h2 P, h3 P), n3 N|tie(N, S)→P, n4 P|N (h2 alone), n5 N|N
    h1_true, h1_pred = [S, P, P, N, N], [S, S, N, P, N]
    h1 = ceiling["per_human"]["h1"]
    assert h1["n"] == 5
    assert h1["kappa"] == pytest.approx(cohen_kappa_score(h1_true, h1_pred))
    assert h1["macro_f1"] == pytest.approx(f1_score(h1_true, h1_pred, average="macro"))
    # h3 labelled n1, n2, n3, n5; others' consensus: n1 S, n2 tie(S, P)→P, n3 N, n5 N
    h3_true, h3_pred = [S, P, N, N], [S, P, S, N]
    assert ceiling["per_human"]["h3"]["kappa"] == pytest.approx(cohen_kappa_score(h3_true, h3_pred))
    kappas = [ceiling["per_human"][h]["kappa"] for h in ("h1", "h2", "h3")]
    assert ceiling["kappa"] == {
        "mean": pytest.approx(np.mean(kappas)),
        "min": pytest.approx(min(kappas)),
        "max": pytest.approx(max(kappas)),
    }
    assert ceiling["n_humans"] == 3


def test_judge_with_no_shared_units_has_no_figures():
    rows = [("q", "s", "n1", "h1", S), ("q", "s", "n2", "judge", S)]
    out = judge_agreement(frame(rows), ["judge"], ["h1"], n_resamples=0)
    figures = out["judges"]["judge"]
    assert figures["n"] == 0 and figures["kappa"] is None and figures["macro_f1"] is None
    assert figures["note"]


# ------------------------------------------------------------------------------------------ rank correlation


def test_system_rank_correlation_matches_scipy():
    auto = {"a": 0.9, "b": 0.4, "c": 0.6, "d": 0.1, "only_auto": 0.5}
    human = {"a": 0.8, "b": 0.5, "c": 0.4, "d": 0.2, "only_human": 0.3}
    out = system_rank_correlation(auto, human)
    x, y = [0.9, 0.4, 0.6, 0.1], [0.8, 0.5, 0.4, 0.2]
    assert out["n"] == 4
    assert out["spearman"] == pytest.approx(spearmanr(x, y).statistic)  # by hand: 1 − 6·2/(4·15) = 0.8
    assert out["spearman"] == pytest.approx(0.8)
    assert out["kendall_tau_b"] == pytest.approx(kendalltau(x, y).statistic)  # 5 concordant, 1 discordant
    assert out["kendall_tau_b"] == pytest.approx(4 / 6)


def test_system_rank_correlation_needs_three_systems_and_variation():
    two = system_rank_correlation({"a": 1.0, "b": 0.0}, {"a": 1.0, "b": 0.5})
    assert two["spearman"] is None and two["kendall_tau_b"] is None and "three" in two["note"]
    flat = system_rank_correlation({"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 1.0, "b": 0.5, "c": 0.2})
    assert flat["spearman"] is None and "same" in flat["note"]
    missing = system_rank_correlation({"a": None, "b": 1.0, "c": 0.0}, {"a": 1.0, "b": 0.5, "c": 0.2})
    assert missing["n"] == 2 and missing["spearman"] is None
