"""Bradley-Terry leaderboard: known answers, ties, the disconnected-graph prior, an independent MLE."""

from __future__ import annotations

from math import log

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from stats.leaderboard import bradley_terry_leaderboard


def duels(outcomes) -> pd.DataFrame:
    """[(item, ranker, {system: rank})] -> long rankings."""
    rows = [(item, ranker, f"{item}-{s}", rank, s) for item, ranker, ranks in outcomes for s, rank in ranks.items()]
    return pd.DataFrame(rows, columns=["item", "annotator", "answer", "rank", "system"])


def test_two_systems_three_of_four_wins_gives_log_three():
    # BT MLE: P(A beats B) = 3/4 = e^a / (e^a + e^b) -> a - b = ln 3; centred -> +-ln(3)/2
    data = duels([(f"q{i}", "r", {"A": 1, "B": 2}) for i in range(3)] + [("q3", "r", {"A": 2, "B": 1})])
    board = bradley_terry_leaderboard(data, alpha=0.0, n_resamples=0)
    s = board.strengths()
    assert s["A"] - s["B"] == pytest.approx(log(3), abs=1e-6)
    assert s["A"] + s["B"] == pytest.approx(0.0, abs=1e-9)
    a = board.standings[0]
    assert a.system == "A" and a.win_rate == 0.75 and a.n_comparisons == 4 and a.mean_rank == 1.25


def test_a_tie_is_half_a_win_each():
    # A beats B once and ties once: 1.5 wins of 2 -> P = 3/4 -> ln 3 again; win rate .75
    data = duels([("q0", "r", {"A": 1, "B": 2}), ("q1", "r", {"A": 1, "B": 1})])
    board = bradley_terry_leaderboard(data, alpha=0.0, n_resamples=0)
    s = board.strengths()
    assert s["A"] - s["B"] == pytest.approx(log(3), abs=1e-6)
    assert board.standings[0].win_rate == 0.75


def test_excluded_system_is_removed_before_counting():
    data = duels([("q0", "r", {"ref": 1, "A": 2, "B": 3}), ("q1", "r", {"ref": 1, "B": 2, "A": 3})])
    board = bradley_terry_leaderboard(data, exclude={"ref"}, n_resamples=0)
    assert {s.system for s in board.standings} == {"A", "B"}
    assert all(s.mean_rank == 1.5 for s in board.standings)  # re-ranked 1/2 after dropping ref


def test_disconnected_graph_is_finite_with_the_prior_and_says_so():
    data = duels([("q0", "r", {"A": 1, "B": 2}), ("q1", "r", {"C": 1, "D": 2}), ("q2", "r", {"B": 1, "A": 2})])
    board = bradley_terry_leaderboard(data, n_resamples=50)
    assert not board.connected
    assert all(np.isfinite(s.strength) for s in board.standings)
    assert any("disconnected" in n for n in board.notes)
    s = board.strengths()
    assert s["C"] > s["D"] and s["A"] == pytest.approx(s["B"], abs=1e-9)


def test_undefeated_system_stays_finite():
    even, odd = {"A": 1, "B": 2, "C": 3, "D": 4}, {"A": 1, "C": 2, "B": 3, "D": 4}  # A never loses
    data = duels([(f"q{i}", "r", even if i % 2 == 0 else odd) for i in range(4)])
    board = bradley_terry_leaderboard(data, n_resamples=0)
    assert board.standings[0].system == "A" and np.isfinite(board.standings[0].strength)
    assert any("never won" in n for n in board.notes)


def test_the_notes_name_the_regularisation_in_words_not_as_a_parameter():
    """The notes reach the study report page as they are: no ``alpha=`` written as code."""
    undefeated = duels([(f"q{i}", "r", {"A": 1, "B": 2 + i % 2, "C": 3 - i % 2}) for i in range(4)])
    disconnected = duels([("q0", "r", {"A": 1, "B": 2}), ("q1", "r", {"C": 1, "D": 2})])
    notes = [*bradley_terry_leaderboard(undefeated, n_resamples=0).notes]
    notes += bradley_terry_leaderboard(disconnected, n_resamples=0).notes
    assert len(notes) == 2
    for note in notes:
        assert "regularisation (0.01)" in note and "alpha" not in note


def test_matches_an_independent_maximum_likelihood_fit():
    rng = np.random.default_rng(4)
    true = np.array([1.0, 0.4, 0.0, -0.6, -0.8])
    systems = list("abcde")
    outcomes = []
    for q in range(60):
        noisy = true + rng.gumbel(size=5)
        ranks = (-noisy).argsort().argsort() + 1
        outcomes.append((f"q{q}", "r", dict(zip(systems, ranks, strict=True))))
    board = bradley_terry_leaderboard(duels(outcomes), alpha=0.0, n_resamples=0)

    wins = np.zeros((5, 5))
    for _, _, ranks in outcomes:
        for i, a in enumerate(systems):
            for j, b in enumerate(systems):
                wins[i, j] += ranks[a] < ranks[b]

    def nll(theta):
        diff = theta[:, None] - theta[None, :]
        return -(wins * (diff - np.logaddexp(0, diff))).sum()

    theta = minimize(nll, np.zeros(5), method="BFGS", options={"gtol": 1e-10}).x
    theta -= theta.mean()
    ours = board.strengths()
    assert [ours[s] for s in systems] == pytest.approx(list(theta), abs=1e-5)


def test_intervals_and_single_system():
    data = duels([(f"q{i}", r, {"A": 1 + (i % 3 == 0), "B": 2 - (i % 3 == 0)}) for i in range(12) for r in "xy"])
    board = bradley_terry_leaderboard(data, n_resamples=200)
    for s in board.standings:
        assert s.strength_ci[0] <= s.strength <= s.strength_ci[1]
        assert s.win_rate_ci[0] <= s.win_rate <= s.win_rate_ci[1]
    one = bradley_terry_leaderboard(duels([("q0", "r", {"A": 1})]))
    assert one.standings == () and "nothing to compare" in one.undefined_reason


def test_every_interval_contains_its_estimate_when_a_system_wins_or_loses_everything():
    """Usability F16: two questions, one physician each, always A > B > C. Every resample is the whole data again,
    so the intervals have no width; the warm-started fit of each resample stopped 1e-9 beside the estimate, the
    upper bound fell *below* it, and the report's plot (a whisker of negative length) was a 500."""
    data = duels([(q, r, {"A": 1, "B": 2, "C": 3}) for q, r in (("q1", "x"), ("q2", "y"))])
    board = bradley_terry_leaderboard(data, n_resamples=200)
    for s in board.standings:
        for estimate, ci in ((s.strength, s.strength_ci), (s.win_rate, s.win_rate_ci), (s.mean_rank, s.mean_rank_ci)):
            assert ci[0] <= estimate <= ci[1], (s.system, estimate, ci)
    assert [s.system for s in board.standings] == ["A", "B", "C"]
    assert board.standings[0].win_rate_ci == (1.0, 1.0) and board.standings[-1].win_rate_ci == (0.0, 0.0)
