"""The judge card's statistics: known answers computed by hand (or by a reference written here), the undefined
cases, the refusals, and the same figures whatever the rows' order."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, norm, spearmanr

from stats.bootstrap import percentile_interval, resample_counts
from stats.judge_card import (
    abstention_by_difficulty,
    bias_by_group,
    calibration,
    position_bias,
    self_preference,
)
from stats.rates import wilson_interval

Z95 = 1.959963984540054


def wilson_by_hand(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


# ------------------------------------------------------------------------------------------------ calibration

# bins: [0, .1) holds .05; [.1, .2) holds .15 and .12; [.9, 1] (closed) holds .95 and 1.0
FIVE_PROBS = [0.05, 0.15, 0.12, 0.95, 1.0]
FIVE_OUTCOMES = [0.0, 0.0, 1.0, 1.0, 0.5]


def test_calibration_five_rows_by_hand():
    got = calibration(FIVE_PROBS, FIVE_OUTCOMES)
    # ECE = 1/5·|.05 − 0| + 2/5·|.135 − .5| + 2/5·|.975 − .75| = .01 + .146 + .09
    assert got["ece"] == pytest.approx(0.246, abs=1e-12)
    # Brier = (.0025 + .0225 + .7744 + .0025 + .25) / 5
    assert got["brier"] == pytest.approx(1.0519 / 5, abs=1e-12)
    assert got["n"] == 5 and got["n_questions"] == 5
    assert got["mean_prob"] == pytest.approx(2.27 / 5) and got["mean_outcome"] == pytest.approx(0.5)
    bins = [(b["low"], b["high"], b["n"], b["mean_prob"], b["mean_outcome"]) for b in got["bins"]]
    assert bins == [
        pytest.approx((0.0, 0.1, 1, 0.05, 0.0)),
        pytest.approx((0.1, 0.2, 2, 0.135, 0.5)),
        pytest.approx((0.9, 1.0, 2, 0.975, 0.75)),
    ]
    assert got["undefined_reason"] is None
    for key in ("ece", "brier"):
        low, high = got[f"{key}_ci"]
        assert low <= got[key] <= high


def test_a_perfectly_calibrated_judge_has_ece_zero():
    prob = [0.25] * 4 + [0.75] * 4 + [0.6]
    outcome = [0, 0, 0, 1, 1, 1, 1, 0, 0.6]
    got = calibration(prob, outcome)
    assert got["ece"] == pytest.approx(0.0, abs=1e-12)
    assert got["brier"] > 0  # calibrated is not the same as sharp
    assert [b["n"] for b in got["bins"]] == [4, 1, 4]


def test_calibration_interval_resamples_whole_questions():
    """Reference: the same count matrix applied question by question, ECE recomputed from the expanded rows."""
    prob = np.array([0.05, 0.15, 0.12, 0.95, 1.0, 0.55, 0.45, 0.3])
    outcome = np.array([0.0, 0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 0.5])
    items = ["q2", "q2", "q1", "q3", "q3", "q4", "q1", "q4"]
    got = calibration(prob, outcome, items=items, n_resamples=200, seed=7)
    questions = sorted(set(items))
    counts = resample_counts(len(questions), 200, 7)

    def ece(p, o):
        bins = np.minimum(np.floor(p * 10), 9)
        return sum(abs(p[bins == b].sum() - o[bins == b].sum()) for b in np.unique(bins)) / p.size

    samples = []
    rows_of = {question: np.flatnonzero(np.array(items) == question) for question in questions}
    for row in counts:
        rows = np.concatenate([np.repeat(rows_of[q], int(c)) for q, c in zip(questions, row, strict=True)])
        samples.append(ece(prob[rows], outcome[rows]))
    low, high = percentile_interval(np.array(samples))
    assert got["ece"] == pytest.approx(ece(prob, outcome))
    assert got["ece_ci"] == pytest.approx([min(low[0], got["ece"]), max(high[0], got["ece"])])
    assert got["n_questions"] == 4


def test_calibration_missing_physician_values_are_left_out():
    got = calibration([0.2, 0.9, 0.4], [0.0, None, float("nan")])
    assert got["n"] == 1 and got["ece"] is None and "at least 2" in got["undefined_reason"]
    empty = calibration([], [])
    assert empty["n"] == 0 and empty["ece"] is None and empty["bins"] == []
    assert "no answer has both a probability and a physician's value" == empty["undefined_reason"]


def test_calibration_on_one_question_has_figures_but_no_interval():
    got = calibration([0.2, 0.8], [0.0, 1.0], items=["q", "q"])
    assert got["ece"] == pytest.approx(0.2) and got["ece_ci"] is None and got["brier_ci"] is None
    assert "one question" in got["interval_undefined_reason"]


@pytest.mark.parametrize("bad", [1.2, -0.1, float("nan"), float("inf"), None])
def test_calibration_refuses_a_probability_outside_0_1(bad):
    with pytest.raises(ValueError, match="prob"):
        calibration([0.5, bad], [1.0, 0.0])


def test_calibration_refuses_an_outcome_outside_0_1():
    with pytest.raises(ValueError, match="outcome"):
        calibration([0.5, 0.5], [1.5, 0.0])


# --------------------------------------------------------------------------------------------------- mean bias


def test_bias_by_group_by_hand():
    judge = [0.8, 0.6, 0.5, 1.0, 0.2, 0.9, 0.7]
    physicians = [0.5, 0.5, 0.5, 0.5, 0.4, 0.1, None]
    groups = ["a", "a", "a", "b", "b", "c", "c"]
    got = bias_by_group(judge, physicians, groups)
    a = got["groups"]["a"]
    # differences .3, .1, 0: mean 2/15, s² = ((1/6)² + (1/30)² + (2/15)²) / 2, t_{.975, 2} = 4.302652729911275
    s = math.sqrt(((0.3 - 2 / 15) ** 2 + (0.1 - 2 / 15) ** 2 + (2 / 15) ** 2) / 2)
    assert a["n"] == 3 and a["mean"] == pytest.approx(2 / 15)
    assert (a["low"], a["high"]) == pytest.approx(
        (2 / 15 - 4.302652729911275 * s / math.sqrt(3), 2 / 15 + 4.302652729911275 * s / math.sqrt(3))
    )
    b = got["groups"]["b"]
    # differences .5 and −.2: mean .15, s = .7/√2, t_{.975, 1} = 12.706204736174703
    assert b["mean"] == pytest.approx(0.15)
    assert b["high"] - b["mean"] == pytest.approx(12.706204736174703 * (0.7 / math.sqrt(2)) / math.sqrt(2))
    c = got["groups"]["c"]  # one answer with a physician's value
    assert c["n"] == 1 and c["mean"] is None and c["low"] is None and "at least 2" in c["undefined_reason"]
    assert got["overall"]["n"] == 6
    assert got["overall"]["mean"] == pytest.approx((0.3 + 0.1 + 0 + 0.5 - 0.2 + 0.8) / 6)
    assert list(got["groups"]) == ["a", "b", "c"]


def test_bias_by_group_empty_is_undefined():
    got = bias_by_group([], [], [])
    assert got["groups"] == {} and got["overall"]["mean"] is None and got["overall"]["undefined_reason"]


# ----------------------------------------------------------------------------------------------- position bias


def verdict_table() -> pd.DataFrame:
    rows = [
        ("q1", "A", "B", "first"),  # prefers A
        ("q1", "B", "A", "second"),  # prefers A: consistent
        ("q2", "A", "B", "second"),
        ("q2", "B", "A", "first"),  # B both times: consistent
        ("q3", "A", "B", "tie"),
        ("q3", "B", "A", "tie"),  # two ties: consistent
        ("q4", "A", "B", "first"),
        ("q4", "B", "A", "first"),  # the first-shown both times: a flip, to_first
        ("q5", "A", "B", "tie"),
        ("q5", "B", "A", "first"),  # tie then a preference: a flip, not to_first
        ("q6", "A", "C", "first"),
        ("q6", "C", "A", "second"),  # A both times: consistent
        ("q7", "A", "B", "first"),  # one order only
        ("q8", "B", "C", "second"),  # one order only
    ]
    return pd.DataFrame(rows, columns=["item", "first", "second", "verdict"])


def test_position_bias_on_a_hand_built_table():
    got = position_bias(verdict_table())
    flips = got["flips"]
    assert flips["n"] == 6 and flips["count"] == 2 and flips["rate"] == pytest.approx(2 / 6)
    assert flips["to_first"] == 1 and flips["to_second"] == 0
    assert (flips["low"], flips["high"]) == pytest.approx(wilson_by_hand(2, 6))
    first = got["first_position"]
    # non-tie verdicts: 7 chose the first-shown answer, 4 the second; 3 ties
    assert first["n"] == 11 and first["ties"] == 3 and first["rate"] == pytest.approx(7 / 11)
    assert (first["low"], first["high"]) == pytest.approx(wilson_by_hand(7, 11))
    assert first["p_value"] == pytest.approx(binomtest(7, 11, 0.5, alternative="two-sided").pvalue)
    assert got["n"] == 14


def test_position_bias_all_ties_and_empty_are_undefined():
    ties = verdict_table().assign(verdict="tie")
    got = position_bias(ties)
    assert got["first_position"]["rate"] is None and "tie" in got["first_position"]["undefined_reason"]
    assert got["first_position"]["p_value"] is None and got["first_position"]["ties"] == 14
    assert got["flips"]["rate"] == 0.0 and got["flips"]["n"] == 6
    empty = position_bias(pd.DataFrame(columns=["item", "first", "second", "verdict"]))
    assert empty["first_position"]["rate"] is None and empty["flips"]["rate"] is None
    assert empty["flips"]["undefined_reason"] == "no verdicts"
    one_order = position_bias(verdict_table().iloc[[0, 2, 12]])
    assert one_order["flips"]["n"] == 0 and "both orders" in one_order["flips"]["undefined_reason"]


def test_position_bias_refuses_duplicates_and_unknown_verdicts():
    table = verdict_table()
    with pytest.raises(ValueError, match="repeats"):
        position_bias(pd.concat([table, table.iloc[[0]]]))
    with pytest.raises(ValueError, match="verdict"):
        position_bias(table.assign(verdict=["better"] + list(table["verdict"].iloc[1:])))


# --------------------------------------------------------------------------------------------- self-preference


def family_answers(bonus: float, seed: int = 3) -> pd.DataFrame:
    """40 questions, 4 answers each; the first system is of the judge's family; the judge adds ``bonus`` to it."""
    rng = np.random.default_rng(seed)
    n_questions, n_systems = 40, 4
    outcome = rng.uniform(0.1, 0.7, size=(n_questions, n_systems))
    judge = outcome + rng.normal(0, 0.05, size=outcome.shape)
    judge[:, 0] += bonus
    return pd.DataFrame(
        {
            "item": np.repeat([f"q{i:02d}" for i in range(n_questions)], n_systems),
            "own": np.tile([True, False, False, False], n_questions),
            "judge": np.clip(judge, 0, 1).ravel(),
            "outcome": outcome.ravel(),
        }
    )


def run_self_preference(frame: pd.DataFrame, **kwargs):
    return self_preference(frame["judge"], frame["outcome"], frame["own"], items=frame["item"], **kwargs)


def test_a_judge_that_favours_its_family_by_point_two():
    frame = family_answers(0.2)
    got = run_self_preference(frame)
    residual = frame["judge"] - frame["outcome"]
    expected = residual[frame["own"]].mean() - residual[~frame["own"]].mean()
    assert got["effect"] == pytest.approx(expected) and got["effect"] == pytest.approx(0.2, abs=0.03)
    assert 0 < got["low"] <= got["effect"] <= got["high"]
    assert got["p_value"] == pytest.approx(1 / 2001)  # no shuffle reaches it
    assert got["n_own"] == 40 and got["n_other"] == 120


def test_a_fair_judge_shows_no_self_preference():
    got = run_self_preference(family_answers(0.0))
    assert got["low"] < 0 < got["high"]
    assert got["p_value"] > 0.05
    assert abs(got["effect"]) < 0.03


def test_self_preference_by_hand_and_undefined():
    got = self_preference([0.9, 0.7, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5], [True, True, False, False])
    assert got["effect"] == pytest.approx(0.3)
    assert got["own_mean_residual"] == pytest.approx(0.3) and got["other_mean_residual"] == pytest.approx(0.0)
    one_own = self_preference([0.9, 0.5, 0.5], [0.5, 0.5, 0.5], [True, False, False])
    assert one_own["effect"] is None and one_own["low"] is None and "at least 2" in one_own["undefined_reason"]
    empty = self_preference([], [], [])
    assert empty["effect"] is None and empty["undefined_reason"]


def test_self_preference_without_mixed_questions_has_no_p_value():
    got = self_preference(
        [0.9, 0.8, 0.5, 0.4], [0.5, 0.5, 0.5, 0.5], [True, True, False, False], items=["a", "a", "b", "b"]
    )
    # own residuals .4 and .3, the others 0 and −.1: .35 − (−.05)
    assert got["effect"] == pytest.approx(0.4) and got["p_value"] is None
    assert "both" in got["p_value_undefined_reason"]


# ---------------------------------------------------------------------------------------------------- abstention


def abstention_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "item": ["q1", "q2", "q3", "q4", "q5", "q6", "q7"],
            "difficulty": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, np.nan],
            "judge_answers": [4, 4, 4, 4, 4, 4, 2],
            "judge_abstained": [0, 1, 0, 2, 3, 2, 1],
            "physician_tasks": [3, 3, 3, 3, 3, 3, 3],
            "physician_abstained": [0, 0, 1, 0, 1, 2, 0],
        }
    )


def test_abstention_bands_by_hand():
    got = abstention_by_difficulty(abstention_frame())
    bands = {band["band"]: band for band in got["bands"]}
    assert list(bands) == ["easier", "middle", "harder", "unknown difficulty"]
    # tertiles of 1..6: {1, 2}, {3, 4}, {5, 6}
    expected = {
        "easier": (2, 1, 8, 0, 6),
        "middle": (2, 2, 8, 1, 6),
        "harder": (2, 5, 8, 3, 6),
        "unknown difficulty": (1, 1, 2, 0, 3),
    }
    for name, (questions, judge_k, judge_n, doctor_k, doctor_n) in expected.items():
        band = bands[name]
        assert band["n_questions"] == questions
        assert (band["judge"]["n"], band["judge"]["rate"]) == (judge_n, pytest.approx(judge_k / judge_n))
        assert (band["physicians"]["n"], band["physicians"]["rate"]) == (doctor_n, pytest.approx(doctor_k / doctor_n))
    assert (bands["harder"]["judge"]["low"], bands["harder"]["judge"]["high"]) == pytest.approx(wilson_by_hand(5, 8))
    assert bands["easier"]["physicians"]["low"] == 0.0
    assert bands["middle"]["difficulty_low"] == 3.0 and bands["middle"]["difficulty_high"] == 4.0
    assert got["bands_note"] is None
    overall = got["overall"]
    assert overall["n_questions"] == 7 and overall["judge"]["n"] == 26 and overall["judge"]["count"] == 9
    assert (overall["physicians"]["low"], overall["physicians"]["high"]) == pytest.approx(wilson_interval(4, 21))
    # the trend over the six of known difficulty: rates 0, .25, 0, .5, .75, .5
    rates = [0, 0.25, 0, 0.5, 0.75, 0.5]
    reference = spearmanr([1, 2, 3, 4, 5, 6], rates)
    assert got["trend"]["n"] == 6
    assert got["trend"]["rho"] == pytest.approx(reference.statistic)
    assert got["trend"]["p_value"] == pytest.approx(reference.pvalue)
    # midranks of the rates: 1.5, 3, 1.5, 4.5, 6, 4.5; rho is Pearson's r between them and 1..6
    assert got["trend"]["rho"] == pytest.approx(np.corrcoef([1, 2, 3, 4, 5, 6], [1.5, 3, 1.5, 4.5, 6, 4.5])[0, 1])


def test_abstention_with_tied_difficulties_has_fewer_bands():
    frame = abstention_frame().iloc[:4].assign(difficulty=[1.0, 1.0, 1.0, 2.0])
    got = abstention_by_difficulty(frame)
    assert [band["band"] for band in got["bands"]] == ["all of known difficulty"]
    assert "tie" in got["bands_note"]


def test_abstention_undefined_cases():
    empty = abstention_by_difficulty(abstention_frame().iloc[:0])
    assert empty["bands"] == [] and empty["overall"]["judge"]["rate"] is None
    assert empty["overall"]["judge"]["undefined_reason"] and empty["trend"]["undefined_reason"]
    two = abstention_by_difficulty(abstention_frame().iloc[:2])
    assert two["trend"]["rho"] is None and "at least 3" in two["trend"]["undefined_reason"]
    assert "fewer than three" in two["bands_note"]
    flat = abstention_by_difficulty(abstention_frame().iloc[:4].assign(judge_abstained=1))
    assert flat["trend"]["rho"] is None and "same rate" in flat["trend"]["undefined_reason"]


def test_abstention_refuses_more_abstentions_than_answers():
    with pytest.raises(ValueError, match="judge_abstained"):
        abstention_by_difficulty(abstention_frame().assign(judge_abstained=5))


# ----------------------------------------------------------------------------------------------- row order


def test_row_order_changes_no_result():
    frame = family_answers(0.1).assign(
        prob=lambda f: np.clip(f["judge"] + 0.05, 0, 1), group=lambda f: np.where(f["own"], "x", "y")
    )
    other = frame.sample(frac=1, random_state=5).reset_index(drop=True)
    assert calibration(frame["prob"], frame["outcome"], items=frame["item"], n_resamples=300) == calibration(
        other["prob"], other["outcome"], items=other["item"], n_resamples=300
    )
    assert calibration(frame["prob"], frame["outcome"]) == calibration(other["prob"], other["outcome"])
    assert bias_by_group(frame["judge"], frame["outcome"], frame["group"]) == bias_by_group(
        other["judge"], other["outcome"], other["group"]
    )
    assert run_self_preference(frame, n_permutations=300) == run_self_preference(other, n_permutations=300)
    assert self_preference(frame["judge"], frame["outcome"], frame["own"], n_permutations=300) == self_preference(
        other["judge"], other["outcome"], other["own"], n_permutations=300
    )
    table = verdict_table()
    assert position_bias(table) == position_bias(table.sample(frac=1, random_state=2))
    questions = abstention_frame()
    assert abstention_by_difficulty(questions) == abstention_by_difficulty(questions.sample(frac=1, random_state=3))


def test_results_are_json_ready():
    frame = family_answers(0.1)
    results = [
        calibration(FIVE_PROBS, FIVE_OUTCOMES),
        bias_by_group(frame["judge"], frame["outcome"], frame["own"]),
        position_bias(verdict_table()),
        run_self_preference(frame, n_permutations=100),
        abstention_by_difficulty(abstention_frame()),
    ]
    for result in results:
        assert json.loads(json.dumps(result, allow_nan=False)) == result
        assert not _numpy_values(result)


def _numpy_values(value) -> list:
    if isinstance(value, dict):
        return [found for item in value.values() for found in _numpy_values(item)]
    if isinstance(value, list):
        return [found for item in value for found in _numpy_values(item)]
    return [value] if type(value).__module__ == "numpy" else []


def test_a_large_studys_permutation_p_value_is_the_normal_reading_of_the_same_distribution(monkeypatch):
    # 300 questions x 4 answers, one of the judge's family each, a small lean to it: the drawn permutations and the
    # exact moments under a normal law give the same p-value to within the draw's own noise
    from stats import judge_card

    rng = np.random.default_rng(5)
    questions, answers = 300, 4
    items = np.repeat(np.arange(questions), answers)
    own = np.tile(np.arange(answers) == 0, questions)
    outcome = rng.random(questions * answers)
    judge = np.clip(outcome + rng.normal(0, 0.2, outcome.size) + 0.02 * own, 0, 1)
    drawn = self_preference(judge, outcome, own, items=items, n_permutations=4000, seed=1)["p_value"]
    monkeypatch.setattr(judge_card, "PERMUTATION_DRAW_LIMIT", 0)
    read = self_preference(judge, outcome, own, items=items, n_permutations=4000, seed=1)["p_value"]
    assert 0.01 < drawn < 0.99 and read == pytest.approx(drawn, abs=0.02)
    # the exact moments by hand on two questions of two answers, the first of each the judge's family: residuals
    # (0.1, 0.3) and (0.0, 0.4); shuffled, the own sum has mean 0.2 + 0.2 and variance, per question,
    # k(m - k)/(m(m - 1)) = 1/2 times the squared deviations from the question's mean
    residual = np.array([0.1, 0.3, 0.0, 0.4])
    codes = np.array([0, 0, 1, 1])
    mine = np.array([True, False, True, False])
    observed = 0.1 / 2 + 0.0 / 2 - (0.3 + 0.4) / 2  # own mean residual minus the others'
    variance = 0.5 * (0.01 + 0.01) + 0.5 * (0.04 + 0.04)  # k(m-k)/(m(m-1)) x sum of squared deviations, per question
    mean = (0.2 + 0.2) * 1.0 - 0.8 / 2  # E[own sum] x (1/2 + 1/2) - total / 2
    sd = math.sqrt(variance)
    expected = norm.cdf((-abs(observed) - mean) / sd) + norm.sf((abs(observed) - mean) / sd)
    got = judge_card._permutation_p_value_normal(residual, mine, codes, observed)
    assert got == pytest.approx(expected, abs=1e-9)
