"""Metric meta-evaluation: segment tau-b, tie-aware pairwise accuracy, system-level correlations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr

from stats.cells import ranked_cells
from stats.correlation import (
    metric_correlations,
    pairwise_accuracy,
    segment_tau_b,
    system_correlation,
)


def rankings(data: dict) -> pd.DataFrame:
    """{item: {ranker: {system: rank}}} -> long rankings with an answer id per (item, system)."""
    rows = [
        (item, ranker, f"{item}-{system}", rank, system)
        for item, by_ranker in data.items()
        for ranker, ranks in by_ranker.items()
        for system, rank in ranks.items()
    ]
    return pd.DataFrame(rows, columns=["item", "annotator", "answer", "rank", "system"])


def scores(data: dict) -> pd.DataFrame:
    rows = [(item, system, s) for item, by_sys in data.items() for system, s in by_sys.items()]
    return pd.DataFrame(rows, columns=["item", "system", "score"])


R1 = rankings(
    {
        "q1": {"A": {"x": 1, "y": 2, "z": 3, "ref": 4}, "B": {"x": 2, "y": 1, "z": 3, "ref": 4}},
        "q2": {"A": {"x": 1, "y": 3, "z": 2, "ref": 4}, "B": {"x": 1, "y": 2, "z": 3, "ref": 4}},
    }
)
S1 = scores(
    {
        "q1": {"x": 0.9, "y": 0.8, "z": 0.1, "ref": 1.0},
        "q2": {"x": 0.7, "y": 0.6, "z": 0.5, "ref": 1.0},
    }
)


def test_ranks_are_negated_a_perfect_metric_gets_plus_one():
    r = rankings({"q": {"A": {"x": 1, "y": 2, "z": 3}}})
    s = scores({"q": {"x": 3.0, "y": 2.0, "z": 1.0}})  # best rank -> highest score
    res, _ = segment_tau_b(r, s, n_resamples=0)
    assert res.value == 1.0


def test_segment_tau_by_hand_with_reference_excluded():
    # q1: mean ranks x 1.5, y 1.5, z 3 -> human (-1.5, -1.5, -3); scores .9 .8 .1
    #     pairs: xy human tie, metric x>y -> n1 tie in x; xz conc; yz conc -> tau_b = 2 / sqrt((3-1)*3)
    # q2: mean ranks x 1, y 2.5, z 2.5; scores .7 .6 .5: xy conc, xz conc, yz human tie -> 2 / sqrt(2*3)
    res, per_item = segment_tau_b(R1, S1, exclude={"ref"}, n_resamples=0)
    expected = 2 / np.sqrt(6)
    assert per_item["q1"] == pytest.approx(expected, abs=1e-15)
    assert per_item["q1"] == pytest.approx(kendalltau([-1.5, -1.5, -3], [0.9, 0.8, 0.1]).statistic, abs=1e-15)
    assert res.value == pytest.approx(expected, abs=1e-15)
    assert res.n_systems == 3 and res.n_items == 2


def test_reference_changes_the_result_when_not_excluded():
    with_ref, _ = segment_tau_b(R1, S1, n_resamples=0)
    without, _ = segment_tau_b(R1, S1, exclude={"ref"}, n_resamples=0)
    assert with_ref.n_systems == 4 and without.n_systems == 3
    assert with_ref.value != without.value


def test_a_system_called_reference_left_in_gets_a_note():
    r = R1.assign(system=R1["system"].replace("ref", "reference"))
    s = S1.assign(system=S1["system"].replace("ref", "reference"))
    kept, _ = segment_tau_b(r, s, n_resamples=0)
    dropped, _ = segment_tau_b(r, s, exclude=["reference"], n_resamples=0)
    assert any("'reference' is included" in n for n in kept.notes)
    assert not any("reference" in n for n in dropped.notes)


def test_pairwise_accuracy_with_ties_by_hand():
    # q1 human: x~y tie, x>z, y>z ; metric .9 .8 .1: x>y (wrong: human tie), x>z ok, y>z ok -> 2/3
    # q2 human: x>y, x>z, y~z tie ; metric .7 .6 .5: ok, ok, y>z wrong -> 2/3 ; pooled 4/6
    res = pairwise_accuracy(R1, S1, exclude={"ref"}, n_resamples=0)
    assert res.value == pytest.approx(4 / 6, abs=1e-15)
    # a metric that also ties y and z in q2 gets that pair right
    s2 = S1.copy()
    s2.loc[(s2["item"] == "q2") & (s2["system"] == "z"), "score"] = 0.6
    assert pairwise_accuracy(R1, s2, exclude={"ref"}, n_resamples=0).value == pytest.approx(5 / 6, abs=1e-15)
    # tie tolerance 0.15: q1 x,y become a metric tie (right, 3/3), but in q2 x-y and x-z (.7 vs .6) become
    # metric ties against a human preference (wrong), y-z stays right (1/3) -> 4/6
    tol = pairwise_accuracy(R1, s2, exclude={"ref"}, metric_tie_epsilon=0.15, n_resamples=0)
    assert tol.value == pytest.approx(4 / 6, abs=1e-15)


def test_system_level_by_hand():
    # mean ranks (over 2 questions x 2 rankers): x (1+2+1+1)/4 = 1.25, y (2+1+3+2)/4 = 2, z (3+3+2+3)/4 = 2.75
    # mean scores: x .8, y .7, z .3
    human = [-1.25, -2.0, -2.75]
    metric = [0.8, 0.7, 0.3]
    p = system_correlation(R1, S1, exclude={"ref"}, n_resamples=0)
    s = system_correlation(R1, S1, method="spearman", exclude={"ref"}, n_resamples=0)
    assert p.value == pytest.approx(pearsonr(human, metric).statistic, abs=1e-14)
    assert s.value == pytest.approx(spearmanr(human, metric).statistic, abs=1e-14) and s.value == 1.0
    bt = system_correlation(R1, S1, human="bradley_terry", exclude={"ref"}, n_resamples=0)
    assert bt.value > 0.9


def test_system_level_needs_three_systems():
    res = system_correlation(R1, S1, exclude={"ref", "z"})
    assert res.value is None and "at least three" in res.undefined_reason and res.n_systems == 2


def test_constant_metric_is_undefined_not_zero():
    flat = S1.assign(score=0.5)
    seg, per_item = segment_tau_b(R1, flat, exclude={"ref"})
    assert seg.value is None and per_item.isna().all()
    assert system_correlation(R1, flat, exclude={"ref"}).value is None


def test_missing_scores_are_counted_in_notes():
    partial = S1[~((S1["item"] == "q2") & (S1["system"] == "y"))]
    res, per_item = segment_tau_b(R1, partial, exclude={"ref"}, n_resamples=0)
    assert any("without a score" in n for n in res.notes)
    # q2 keeps x, z with mean ranks 1, 2.5 and scores .7, .5 -> tau 1
    assert per_item["q2"] == 1.0


def test_bootstrap_interval_over_questions():
    rng = np.random.default_rng(0)
    data, sc = {}, {}
    for q in range(30):
        quality = np.arange(5.0)
        data[f"q{q}"] = {
            r: dict(zip("abcde", (-(quality + rng.normal(0, 1, 5))).argsort().argsort() + 1, strict=True))
            for r in ("A", "B")
        }
        sc[f"q{q}"] = dict(zip("abcde", quality + rng.normal(0, 1, 5), strict=True))
    res, per_item = segment_tau_b(rankings(data), scores(sc))
    assert res.ci[0] < res.value < res.ci[1]
    assert res.value == pytest.approx(per_item.mean(), abs=1e-15)
    p = system_correlation(rankings(data), scores(sc))
    assert p.ci is not None and p.ci[0] <= p.value <= p.ci[1]


def test_pairwise_accuracy_compares_mean_ranks_when_rankers_saw_different_systems():
    # B is ranked by three rankers (mean 1.33), C by two (mean 2), A by one (mean 1). Summed ranks would call
    # B and C a human tie (4 and 4) and count the metric's B > C as wrong.
    rows = [
        ("q", "r1", "A", 1), ("q", "r1", "B", 2),
        ("q", "r2", "B", 1), ("q", "r2", "C", 2),
        ("q", "r3", "B", 1), ("q", "r3", "C", 2),
    ]  # fmt: skip
    rankings = pd.DataFrame([{"item": i, "annotator": a, "answer": s, "rank": r, "system": s} for i, a, s, r in rows])
    scores = pd.DataFrame({"item": "q", "system": ["A", "B", "C"], "score": [3.0, 2.0, 1.0]})
    assert pairwise_accuracy(rankings, scores, n_resamples=0).value == 1.0


def _random_study(seed: int) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """30 questions, 5 systems and a reference, 3 of 6 rankers each (some cells left unscored), two metrics."""
    rng = np.random.default_rng(seed)
    systems = ["a", "b", "c", "d", "e", "ref"]
    data = {}
    for q in range(30):
        data[f"q{q}"] = {
            f"r{k}": dict(zip(systems, rng.permutation(len(systems)) + 1, strict=True))
            for k in rng.choice(6, size=3, replace=False)
        }
    metrics = [
        scores({f"q{q}": {s: float(rng.integers(0, 4)) for s in systems if rng.random() > 0.1} for q in range(30)})
        for _ in range(2)
    ]
    return rankings(data), metrics


def test_metric_correlations_are_the_four_statistics_with_the_rankings_shared():
    """One join per metric, the rankings' side made once for both metrics: every figure, interval and note the
    same as each statistic computed on its own from the rankings."""
    ranks, metrics = _random_study(11)
    shared = ranked_cells(ranks, {"ref"})
    kw = {"n_resamples": 200, "seed": 3}
    for metric in metrics:
        alone = {
            "segment_tau_b": segment_tau_b(ranks, metric, exclude={"ref"}, **kw)[0],
            "pairwise_accuracy": pairwise_accuracy(ranks, metric, exclude={"ref"}, **kw),
            "system_pearson": system_correlation(ranks, metric, method="pearson", exclude={"ref"}, **kw),
            "system_spearman": system_correlation(ranks, metric, method="spearman", exclude={"ref"}, **kw),
        }
        together = metric_correlations(shared, metric, **kw)
        assert {k: v.to_dict() for k, v in together.items()} == {k: v.to_dict() for k, v in alone.items()}
        assert together["pairwise_accuracy"].value is not None and together["pairwise_accuracy"].ci_low is not None
        assert segment_tau_b(shared, metric, **kw)[0].to_dict() == alone["segment_tau_b"].to_dict()


def test_shared_rankings_refuse_an_exclusion_made_too_late():
    """A system is dropped before the re-ranking, so shared cells that kept it cannot leave it out afterwards."""
    ranks, metrics = _random_study(12)
    with pytest.raises(ValueError, match="ref"):
        pairwise_accuracy(ranked_cells(ranks), metrics[0], exclude={"ref"})
    assert pairwise_accuracy(ranked_cells(ranks, {"ref"}), metrics[0], exclude={"ref"}).value is not None


def test_scores_of_no_ranked_question_are_undefined_not_an_error():
    """Bug fixed: scores that share no (question, system) with the rankings made segment tau-b index an empty
    array (an IndexError, so a failed study report) instead of saying the figure is undefined."""
    ranks = rankings({"q1": {"A": {"x": 1, "y": 2, "z": 3}}})
    elsewhere = scores({"q9": {"x": 0.3, "y": 0.2, "z": 0.1}})
    res, per_item = segment_tau_b(ranks, elsewhere, n_resamples=10)
    assert res.value is None and res.undefined_reason and per_item.empty
    for figure in metric_correlations(ranks, elsewhere, n_resamples=10).values():
        assert figure.value is None and figure.undefined_reason
        assert "3 ranked (item, system) cell(s) without a score left out" in figure.notes


@pytest.mark.parametrize(
    ("ranked_as", "scored_as", "exclude", "warned"),
    [
        ("reference", "reference", (), True),
        ("reference", "ref", (), True),  # named so in the rankings only
        ("ref", "reference", (), True),  # in the scores only
        ("reference", "reference", ("reference",), False),
        ("ref", "ref", (), False),
    ],
)
def test_a_system_named_reference_is_pointed_out_unless_excluded(ranked_as, scored_as, exclude, warned):
    r = R1.assign(system=R1["system"].replace("ref", ranked_as))
    s = S1.assign(system=S1["system"].replace("ref", scored_as))
    res = pairwise_accuracy(r, s, exclude=exclude, n_resamples=0)
    assert any("named 'reference'" in note for note in res.notes) is warned
