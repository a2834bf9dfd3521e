"""Judge meta-evaluation: clusters, tie calibration and the human ceiling on a small hand-made study."""

import numpy as np
import pandas as pd
import pytest

from stats.judges import judge_meta_evaluation, leave_one_out

SYSTEMS = ("s1", "s2", "s3", "s4")


def study(n_items=30, physicians=("p1", "p2", "p3"), seed=0):
    """Every physician ranks the four systems of each question: true quality s1 > s2 > s3 > s4, with noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_items):
        for person in physicians:
            key = {s: -i + rng.normal(scale=0.8) for i, s in enumerate(SYSTEMS)}
            for rank, s in enumerate(sorted(SYSTEMS, key=lambda s: -key[s]), start=1):
                rows.append({"item": f"q{q}", "annotator": person, "answer": s, "rank": rank, "system": s})
    return pd.DataFrame(rows)


def scores_from(fn, n_items=30):
    return pd.DataFrame(
        [{"item": f"q{q}", "system": s, "score": fn(q, i)} for q in range(n_items) for i, s in enumerate(SYSTEMS)]
    )


def test_leave_one_out_by_hand():
    # two physicians, one question: p1 ranks s1 > s2 > s3, p2 ranks s1 > s3 > s2
    rows = [("p1", "s1", 1), ("p1", "s2", 2), ("p1", "s3", 3), ("p2", "s1", 1), ("p2", "s3", 2), ("p2", "s2", 3)]
    rankings = pd.DataFrame([{"item": "q", "annotator": a, "answer": s, "rank": r, "system": s} for a, s, r in rows])
    judge = pd.DataFrame({"item": "q", "system": ["s1", "s2", "s3"], "score": [3.0, 2.0, 1.0]})  # agrees with p1
    physicians, judged = leave_one_out(rankings, {"j": judge})
    # each physician against the other: pairs (s1,s2) and (s1,s3) agree, (s2,s3) disagrees -> 2/3
    assert physicians == pytest.approx({"p1": 2 / 3, "p2": 2 / 3})
    # the judge against p2 alone: 2/3; against p1 alone: 3/3
    assert judged["j"] == pytest.approx({"p1": 2 / 3, "p2": 1.0})


def test_leave_one_out_is_each_physician_against_the_others_on_their_questions():
    """The way it is computed (questions as integers, the others' rankings made once per physician) gives what the
    definition says, written the plain way: for each physician, the other physicians' rankings of that
    physician's questions against the physician's own ranks, and against each judge's scores of those questions.
    Physicians see different questions here, and one judge scores a question nobody ranked."""
    from stats.correlation import pairwise_accuracy

    rng = np.random.default_rng(4)
    full = study(n_items=24, physicians=("p1", "p2", "p3", "p4"), seed=2)
    rankings = full[[rng.random() < 0.75 for _ in range(len(full))]]  # drop whole rows: partial rankings too
    rankings = rankings[rankings.groupby(["item", "annotator"])["rank"].transform("size") >= 2]
    judges = {
        "good": scores_from(lambda q, i: -i + rng.normal(scale=0.5), n_items=24),
        "extra": scores_from(lambda q, i: rng.normal(), n_items=25),  # q24: nobody ranked it
    }
    physicians, judged = leave_one_out(rankings, judges)
    expected_physicians: dict[str, float] = {}
    expected_judged: dict[str, dict[str, float]] = {name: {} for name in judges}
    for person in sorted(rankings["annotator"].unique()):
        own = rankings[rankings["annotator"] == person]
        others = rankings[(rankings["annotator"] != person) & rankings["item"].isin(set(own["item"]))]
        if others.empty:
            continue
        own_scores = pd.DataFrame({"item": own["item"], "system": own["system"], "score": -own["rank"]})
        value = pairwise_accuracy(others, own_scores, n_resamples=0).value
        if value is None:
            continue
        expected_physicians[person] = value
        for name, scores in judges.items():
            mine = scores[scores["item"].isin(set(own["item"]))]
            judge_value = pairwise_accuracy(others, mine, n_resamples=0).value
            if judge_value is not None:
                expected_judged[name][person] = judge_value
    assert len(expected_physicians) == 4
    assert physicians == pytest.approx(expected_physicians, abs=1e-12)
    assert judged.keys() == expected_judged.keys()
    for name in judges:
        assert judged[name] == pytest.approx(expected_judged[name], abs=1e-12)


def test_a_good_judge_outranks_a_random_one_in_its_own_cluster():
    rankings = study()
    rng = np.random.default_rng(1)
    judges = {
        "good": scores_from(lambda q, i: -i + rng.normal(scale=0.3)),
        "random": scores_from(lambda q, i: rng.normal()),
    }
    result = judge_meta_evaluation(rankings, judges, n_permutations=500, n_resamples=100)
    good, rand = result.judges["good"], result.judges["random"]
    assert good.acc_eq.value > rand.acc_eq.value
    assert good.cluster == 1 and rand.cluster == 2
    assert result.clusters() == [["good"], ["random"]]
    assert result.p_better[("good", "random")] < 0.05
    # the good judge agrees with the consensus better than most physicians; the random one worse than all
    assert good.ceiling.percentile > rand.ceiling.percentile
    assert rand.ceiling.percentile == 0.0
    assert set(result.physicians) == {"p1", "p2", "p3"}
    assert good.segment_tau_b.value > 0 and good.segment_tau_c.value > 0


def test_tie_calibration_helps_a_judge_that_scores_on_a_coarse_scale():
    rankings = study()
    # a judge that gives nearly equal scores to s2 and s3 (a tie the physicians do not make) loses pairs at eps 0
    judges = {"coarse": scores_from(lambda q, i: [3.0, 2.0, 2.0 + 1e-3 * (q % 2), 1.0][i])}
    result = judge_meta_evaluation(rankings, judges, tie_calibrate=True, n_permutations=0, n_resamples=0)
    figs = result.judges["coarse"]
    assert figs.acc_eq_calibrated >= figs.acc_eq.value
    assert figs.acc_eq_held_out is not None
    assert any("optimistic" in n for n in result.notes)
    assert figs.cluster is None  # no permutations asked for


def test_identical_judges_share_a_cluster():
    rankings = study(n_items=12)
    same = scores_from(lambda q, i: -float(i), n_items=12)
    result = judge_meta_evaluation(rankings, {"a": same, "b": same.copy()}, n_permutations=200, n_resamples=0)
    assert result.judges["a"].cluster == result.judges["b"].cluster == 1
    assert result.p_better[("a", "b")] == 1.0


def test_label_scores_count_places_from_the_worst():
    from stats.judges_cli import label_scores, parse_label_scale

    assert label_scores(["Excellent", "fair", "poor"]) == {"excellent": 2.0, "fair": 1.0, "poor": 0.0}
    assert parse_label_scale(" good , okay,, bad ") == ["good", "okay", "bad"]
    assert parse_label_scale("") is None and parse_label_scale(None) is None
