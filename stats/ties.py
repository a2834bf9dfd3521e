"""Tie-aware rank agreement between a judge and the physicians, and tie calibration (pure).

Deutsch, Foster and Freitag (2023), "Ties Matter: Meta-Evaluating Modern Metrics with Pairwise Accuracy and Tie
Calibration" (EMNLP), as used by the WMT metrics task since 2023 and implemented in Google's mt-metrics-eval:

* Over every pair of answers, count C (both order the pair the same way), D (opposite ways), T_h (only the
  physicians tie it), T_m (only the judge ties it) and T_hm (both tie it). The judge ties a pair when the absolute
  difference of its scores is at most ``epsilon`` (0 = exact equality).
* ``acc_eq`` = (C + T_hm) / all pairs: a correctly predicted tie counts as a correct answer.
* ``tau_eq`` = (C + T_hm − D − T_h − T_m) / all pairs.
* ``tau_b`` and ``tau_c`` are the classical variants (scipy's definitions; both ignore ``epsilon``).

**Tie calibration** picks the ``epsilon`` that maximises ``acc_eq`` on the data. Because ``epsilon`` is chosen on the
very pairs it is scored on, the calibrated value is optimistic; :func:`tie_calibration_held_out` chooses it on one
half of the questions and scores it on the other half (and the other way round), which is the honest figure.

Convention: both inputs are "higher is better" (negate ranks before calling: rank 1 is best).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PairCounts:
    """The five kinds of pair between a human and a judge's ordering (Deutsch et al. 2023, Table 1)."""

    concordant: int
    discordant: int
    human_ties: int
    judge_ties: int
    both_ties: int

    @property
    def total(self) -> int:
        return self.concordant + self.discordant + self.human_ties + self.judge_ties + self.both_ties

    @property
    def acc_eq(self) -> float | None:
        return (self.concordant + self.both_ties) / self.total if self.total else None

    @property
    def tau_eq(self) -> float | None:
        if not self.total:
            return None
        wrong = self.discordant + self.human_ties + self.judge_ties
        return (self.concordant + self.both_ties - wrong) / self.total


def pair_signs(human: np.ndarray, judge: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every pair i < j: the sign of the human difference and the judge's score difference."""
    human = np.asarray(human, dtype=float)
    judge = np.asarray(judge, dtype=float)
    if human.shape != judge.shape or human.ndim != 1:
        raise ValueError("human and judge scores must be two vectors of the same length")
    i, j = np.triu_indices(len(human), k=1)
    return np.sign(human[i] - human[j]), judge[i] - judge[j]


def count_pairs(human_sign: np.ndarray, judge_diff: np.ndarray, epsilon: float = 0.0) -> PairCounts:
    """Classify pairs given the human order (sign) and the judge's score difference, ties within ``epsilon``."""
    if epsilon < 0:
        raise ValueError("epsilon must not be negative")
    human_sign = np.asarray(human_sign, dtype=float)
    judge_diff = np.asarray(judge_diff, dtype=float)
    judge_tie = np.abs(judge_diff) <= epsilon
    human_tie = human_sign == 0
    return PairCounts(
        concordant=int((~human_tie & ~judge_tie & (np.sign(judge_diff) == human_sign)).sum()),
        discordant=int((~human_tie & ~judge_tie & (np.sign(judge_diff) != human_sign)).sum()),
        human_ties=int((human_tie & ~judge_tie).sum()),
        judge_ties=int((~human_tie & judge_tie).sum()),
        both_ties=int((human_tie & judge_tie).sum()),
    )


def kendall_variants(human, judge, *, epsilon: float = 0.0) -> dict[str, float | None]:
    """``tau_b``, ``tau_c``, ``tau_eq`` and ``acc_eq`` of one vector pair (``None`` where undefined)."""
    human = np.asarray(human, dtype=float)
    judge = np.asarray(judge, dtype=float)
    signs, diffs = pair_signs(human, judge)
    counts = count_pairs(signs, diffs, epsilon)
    exact = count_pairs(signs, diffs, 0.0)  # tau-b and tau-c are defined on exact ties only
    total = exact.total
    human_tied = exact.human_ties + exact.both_ties
    judge_tied = exact.judge_ties + exact.both_ties
    tau_b = tau_c = None
    if total and human_tied < total and judge_tied < total:
        tau_b = (exact.concordant - exact.discordant) / np.sqrt((total - human_tied) * (total - judge_tied))
        classes = min(len(np.unique(human)), len(np.unique(judge)))
        n = len(human)
        tau_c = 2 * (exact.concordant - exact.discordant) / (n * n * (classes - 1) / classes)
    return {
        "tau_b": None if tau_b is None else float(tau_b),
        "tau_c": None if tau_c is None else float(tau_c),
        "tau_eq": counts.tau_eq,
        "acc_eq": counts.acc_eq,
    }


@dataclass(frozen=True)
class Calibration:
    """The best tie threshold found and the accuracy it gives (on the pairs it was chosen on)."""

    epsilon: float
    acc_eq: float
    acc_eq_at_zero: float
    n_pairs: int


def correct_pairs(human_sign: np.ndarray, judge_diff: np.ndarray, epsilon: float) -> np.ndarray:
    """Per pair: does the judge get it right (same order, or both tie, the judge's ties within ``epsilon``)?"""
    judge = np.where(np.abs(np.asarray(judge_diff, dtype=float)) <= epsilon, 0.0, np.sign(judge_diff))
    return judge == np.asarray(human_sign, dtype=float)


def tie_calibration(human_sign, judge_diff) -> Calibration:
    """The ``epsilon`` maximising ``acc_eq`` over the given pairs (the smallest one when several do).

    Only the distinct absolute differences (and 0) can change the outcome, so all of them are tried exactly, in
    one sweep: raising ``epsilon`` past a pair's |difference| turns its judge order into a tie, which loses the pair
    if the physicians ordered it the judge's way and wins it if they tied it.
    """
    human_sign = np.asarray(human_sign, dtype=float)
    judge_diff = np.asarray(judge_diff, dtype=float)
    n = len(human_sign)
    if n == 0:
        raise ValueError("tie calibration needs at least one pair")
    base = correct_pairs(human_sign, judge_diff, 0.0)
    magnitude = np.abs(judge_diff)
    order = np.argsort(magnitude, kind="stable")
    mag = magnitude[order]
    # the change in correct pairs when this pair becomes a judge tie
    delta = (human_sign[order] == 0).astype(int) - base[order].astype(int)
    delta[mag == 0] = 0  # already ties at epsilon 0
    gains = np.cumsum(delta)
    last_of_value = np.r_[mag[1:] != mag[:-1], True]  # a threshold includes every pair with that |difference|
    candidates = np.r_[0.0, mag[last_of_value]]
    correct = int(base.sum()) + np.r_[0, gains[last_of_value]]
    best = int(np.argmax(correct))  # first maximum = smallest epsilon
    return Calibration(
        epsilon=float(candidates[best]),
        acc_eq=float(correct[best] / n),
        acc_eq_at_zero=float(base.sum() / n),
        n_pairs=n,
    )


@dataclass(frozen=True)
class HeldOutCalibration:
    """Two-fold tie calibration: each half's ``epsilon`` scored on the other half."""

    acc_eq: float
    epsilons: tuple[float, float]
    n_pairs: int


def tie_calibration_held_out(human_sign, judge_diff, groups, *, seed: int = 0) -> HeldOutCalibration | None:
    """Calibrate on one half of the questions (``groups``: the question of each pair), score on the other.

    The questions are split at random (seeded) into two halves; ``acc_eq`` pools both directions' held-out pairs.
    ``None`` when there are fewer than two questions.
    """
    human_sign = np.asarray(human_sign, dtype=float)
    judge_diff = np.asarray(judge_diff, dtype=float)
    codes, uniques = _codes(groups)
    if len(uniques) < 2:
        return None
    shuffled = np.random.default_rng(seed).permutation(len(uniques))
    first = np.zeros(len(uniques), dtype=bool)
    first[shuffled[: len(uniques) // 2]] = True
    in_first = first[codes]
    correct = 0
    epsilons = []
    for train, test in ((in_first, ~in_first), (~in_first, in_first)):
        eps = tie_calibration(human_sign[train], judge_diff[train]).epsilon
        epsilons.append(eps)
        correct += int(correct_pairs(human_sign[test], judge_diff[test], eps).sum())
    return HeldOutCalibration(
        acc_eq=correct / len(human_sign), epsilons=(epsilons[0], epsilons[1]), n_pairs=len(human_sign)
    )


def _codes(groups) -> tuple[np.ndarray, np.ndarray]:
    uniques, codes = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    return codes, uniques
