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


def _leave_one_out_by_definition(rankings, judges, exclude=()):
    """The leave-one-out figures written the plain way: for each physician, the other physicians' rankings of that
    physician's questions against the physician's own ranks, and against each judge's scores of those questions."""
    from stats.correlation import pairwise_accuracy
    from stats.leaderboard import system_rank_frame

    reranked = system_rank_frame(rankings, exclude)
    physicians: dict[str, float] = {}
    judged: dict[str, dict[str, float]] = {name: {} for name in judges}
    for person in sorted(reranked["annotator"].unique()):
        own = reranked[reranked["annotator"] == person]
        others = rankings[(rankings["annotator"] != person) & rankings["item"].isin(set(own["item"]))]
        if system_rank_frame(others, exclude).empty:
            continue
        own_scores = pd.DataFrame({"item": own["item"], "system": own["system"], "score": -own["rank"]})
        value = pairwise_accuracy(others, own_scores, exclude=exclude, n_resamples=0).value
        if value is None:
            continue
        physicians[person] = value
        for name, scores in judges.items():
            mine = scores[scores["item"].isin(set(own["item"]))]
            judge_value = pairwise_accuracy(others, mine, exclude=exclude, n_resamples=0).value
            if judge_value is not None:
                judged[name][person] = judge_value
    return physicians, judged


def _assert_same_leave_one_out(got, expected):
    (physicians, judged), (expected_physicians, expected_judged) = got, expected
    assert physicians == pytest.approx(expected_physicians, abs=1e-12)
    assert judged.keys() == expected_judged.keys()
    for name in judged:
        assert judged[name] == pytest.approx(expected_judged[name], abs=1e-12)


def test_leave_one_out_is_each_physician_against_the_others_on_their_questions():
    """The way it is computed (the others' consensus as the whole consensus less the physician's own ranks, over the
    rankings' own pairs) gives what the definition says. Physicians see different questions here, and one judge
    scores a question nobody ranked."""
    rng = np.random.default_rng(4)
    full = study(n_items=24, physicians=("p1", "p2", "p3", "p4"), seed=2)
    rankings = full[[rng.random() < 0.75 for _ in range(len(full))]]  # drop whole rows: partial rankings too
    rankings = rankings[rankings.groupby(["item", "annotator"])["rank"].transform("size") >= 2]
    judges = {
        "good": scores_from(lambda q, i: -i + rng.normal(scale=0.5), n_items=24),
        "extra": scores_from(lambda q, i: rng.normal(), n_items=25),  # q24: nobody ranked it
    }
    expected = _leave_one_out_by_definition(rankings, judges)
    assert len(expected[0]) == 4
    _assert_same_leave_one_out(leave_one_out(rankings, judges), expected)


def test_leave_one_out_with_an_excluded_system_tied_ranks_and_a_physician_alone():
    """The reference answer is dropped before re-ranking, tied ranks average, a physician who shares no question with
    anyone is left out, and one whose only shared question has a system nobody else ranked still counts."""
    rows = []
    for q in range(10):
        for person in ("p1", "p2", "p3"):
            order = ["reference", *np.random.default_rng(q * 7 + len(person) + ord(person[-1])).permutation(SYSTEMS)]
            for place, system in enumerate(order, start=1):
                rank = min(place, 3) if person == "p2" else place  # p2 ties its last three
                rows.append({"item": f"q{q}", "annotator": person, "answer": system, "rank": rank, "system": system})
    rows += [  # p4 alone on q10; p5 on q0 with a system only it ranked
        {"item": "q10", "annotator": "p4", "answer": s, "rank": r, "system": s} for r, s in enumerate(SYSTEMS, 1)
    ] + [
        {"item": "q0", "annotator": "p5", "answer": s, "rank": r, "system": s}
        for r, s in enumerate(["s5", "s1", "s2"], 1)
    ]
    rankings = pd.DataFrame(rows)
    rng = np.random.default_rng(9)
    judges = {
        "judge": scores_from(lambda q, i: -i + rng.normal(), n_items=11),
        "labels": scores_from(lambda q, i: float(rng.integers(0, 3)), n_items=11),  # ties on the judge's side
    }
    judges["judge"].loc[3, "score"] = 9.0
    expected = _leave_one_out_by_definition(rankings, judges, exclude=("reference",))
    assert set(expected[0]) == {"p1", "p2", "p3", "p5"}
    _assert_same_leave_one_out(leave_one_out(rankings, judges, exclude=("reference",)), expected)


def test_cell_pairs_restricted_to_a_judges_cells_are_its_within_question_pairs():
    from stats.cells import cell_pairs, ranked_cells, scores_on_cells
    from stats.correlation import within_question_pairs

    rng = np.random.default_rng(3)
    rankings = study(n_items=15, seed=5)
    scores = scores_from(lambda q, i: float(rng.integers(0, 4)), n_items=15)
    scores = scores[rng.random(len(scores)) < 0.7]  # some cells unscored
    ranked = ranked_cells(rankings)
    pairs = cell_pairs(ranked)
    score = scores_on_cells(ranked, scores)
    scored = ~np.isnan(score[pairs.a]) & ~np.isnan(score[pairs.b])
    expected, *_ = within_question_pairs(rankings, scores)
    cells = ranked.cells
    a, b = pairs.a[scored], pairs.b[scored]
    assert list(cells["item"].to_numpy()[a]) == list(expected["item"])
    assert list(cells["system"].to_numpy()[a]) == list(expected["system_a"])
    assert list(cells["system"].to_numpy()[b]) == list(expected["system_b"])
    assert list(pairs.human[scored]) == list(expected["human"])
    assert list(score[a] - score[b]) == list(expected["diff"])
    assert sorted(set(cells["item"].to_numpy()[pairs.a[pairs.question == 0]])) == [sorted(cells["item"])[0]]


def test_meta_evaluation_figures_by_their_plain_definitions():
    """Tie calibration and the permutation tests read every judge's pairs off the rankings' pairs; here they are
    set against the same figures from each judge's own within-question pairs, joined by name."""
    from stats.correlation import within_question_pairs
    from stats.significance import paired_permutation_test
    from stats.ties import correct_pairs, tie_calibration, tie_calibration_held_out

    rng = np.random.default_rng(11)
    rankings = study(n_items=20, seed=8)
    judges = {
        "fine": scores_from(lambda q, i: -i + rng.normal(), n_items=20),
        "coarse": scores_from(lambda q, i: float(round(-i / 2 + rng.normal())), n_items=20),
        "sparse": scores_from(lambda q, i: rng.normal(), n_items=20).sample(frac=0.6, random_state=1),
    }
    result = judge_meta_evaluation(rankings, judges, tie_calibrate=True, n_permutations=300, n_resamples=0, seed=2)
    pairs = {}
    for name, scores in judges.items():
        p, *_ = within_question_pairs(rankings, scores)
        cal = tie_calibration(p["human"], p["diff"])
        held = tie_calibration_held_out(p["human"], p["diff"], p["item"], seed=2)
        figs = result.judges[name]
        assert (figs.epsilon, figs.acc_eq_calibrated, figs.acc_eq_held_out) == (cal.epsilon, cal.acc_eq, held.acc_eq)
        pairs[name] = p.assign(correct=correct_pairs(p["human"], p["diff"], cal.epsilon).astype(float))
    assert result.p_better
    for (a, b), p_value in result.p_better.items():
        joined = pairs[a].merge(pairs[b], on=["item", "system_a", "system_b"], suffixes=("_a", "_b"))
        per_item = joined.groupby("item")[["correct_a", "correct_b"]].agg(["sum", "size"])
        expected = paired_permutation_test(
            per_item[("correct_a", "sum")], per_item[("correct_b", "sum")], per_item[("correct_a", "size")],
            n_resamples=300, seed=2,
        ).p_value  # fmt: skip
        assert p_value == expected


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
    from evaluation.judges import label_scores, parse_label_scale

    assert label_scores(["Excellent", "fair", "poor"]) == {"excellent": 2.0, "fair": 1.0, "poor": 0.0}
    assert parse_label_scale(" good , okay,, bad ") == ["good", "okay", "bad"]
    assert parse_label_scale("") is None and parse_label_scale(None) is None
