"""Meta-evaluation of automatic judges against physicians' rankings, to the WMT metrics task's standard (pure).

A *judge* is anything that scores answers (higher = better): the portal's own metrics, or an LLM judge run
elsewhere and imported. For every judge, against the physicians' consensus ranking of each question:

* ``acc_eq`` — tie-aware pairwise accuracy at epsilon 0, and with tie calibration the ``epsilon`` that maximises it
  (``acc_eq_calibrated``, optimistic: chosen on the same pairs) and the held-out value (two-fold over questions);
* ``segment_tau_b`` / ``segment_tau_c`` — Kendall tau per question, averaged over questions;
* significance clusters from one-sided paired permutation tests on acc_eq (questions as the unit);
* the human ceiling: each physician's acc_eq against the consensus of the *other* physicians on the questions they
  ranked; the judge is scored against the same leave-one-out consensus on the same questions, and placed as a
  percentile among the physicians (HealthBench's way of reporting its grader).

See :mod:`stats.ties` and :mod:`stats.significance` for the definitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from .cells import (
    CellPairs,
    RankedCells,
    Rankings,
    cell_pairs,
    joined_on_cells,
    ranked_cell_scores,
    ranked_cells,
    scores_on_cells,
)
from .correlation import _pairwise_accuracy, _segment_tau
from .results import StatResult
from .significance import (
    DEFAULT_ALPHA,
    DEFAULT_PERMUTATIONS,
    HumanCeiling,
    human_ceiling,
    paired_permutation_test,
    sign_flips,
    significance_clusters,
)
from .ties import correct_pairs, tie_calibration, tie_calibration_held_out


@dataclass(frozen=True)
class JudgeFigures:
    name: str
    acc_eq: StatResult
    epsilon: float = 0.0
    acc_eq_calibrated: float | None = None
    acc_eq_held_out: float | None = None
    segment_tau_b: StatResult | None = None
    segment_tau_c: StatResult | None = None
    cluster: int | None = None
    ceiling: HumanCeiling | None = None


@dataclass(frozen=True)
class JudgeMetaEvaluation:
    judges: dict[str, JudgeFigures]
    p_better: dict[tuple[str, str], float]  # one-sided p-value that the first judge beats the second
    physicians: dict[str, float]  # each physician's acc_eq against the others
    notes: tuple[str, ...] = field(default_factory=tuple)

    def clusters(self) -> list[list[str]]:
        """Judges grouped by cluster, best first; within a cluster by acc_eq."""
        groups: dict[int, list[str]] = {}
        for figs in sorted(self.judges.values(), key=lambda f: (f.cluster or 0, -(f.acc_eq.value or 0.0), f.name)):
            groups.setdefault(figs.cluster or 0, []).append(figs.name)
        return [groups[k] for k in sorted(groups)]


def leave_one_out(
    rankings: Rankings, judges: Mapping[str, pd.DataFrame], *, exclude: Iterable = ()
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Each physician's acc_eq against the other physicians, and each judge's against the same consensus.

    Returns (physician -> value, judge -> {physician -> value}). A physician whose questions nobody else ranked is
    left out (nothing to compare with).
    """
    ranked = ranked_cells(rankings, exclude)
    pairs = cell_pairs(ranked)
    judge_cells = {name: scores_on_cells(ranked, scores) for name, scores in judges.items()}
    return _leave_one_out(ranked, pairs, judge_cells)


def _leave_one_out(
    ranked: RankedCells, pairs: CellPairs, judge_cells: Mapping[str, np.ndarray]
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    # The others' consensus of a cell is the whole consensus less the physician's own rank: one subtraction per
    # physician over the cells the rankings already summed, and their within-question pairs are the rankings' pairs
    # on the physician's questions. No join per physician and judge.
    rank_sum = ranked.cells["rank_sum"].to_numpy(float)
    n_rankers = ranked.cells["n_rankers"].to_numpy()
    question_of_cell = pd.factorize(ranked.cells["item"])[0]
    annotators = ranked.frame["annotator"].to_numpy()
    ranks = ranked.frame["rank"].to_numpy(float)
    physicians: dict[str, float] = {}
    judged: dict[str, dict[str, float]] = {name: {} for name in judge_cells}
    for person in sorted(pd.unique(annotators), key=str):
        own_rows = annotators == person
        own_cells = ranked.cell_of_row[own_rows]
        own_rank = np.full(len(rank_sum), np.nan)
        own_rank[own_cells] = ranks[own_rows]
        ranked_by_them = ~np.isnan(own_rank)
        n_others = n_rankers - ranked_by_them
        their_questions = np.zeros(question_of_cell.max(initial=-1) + 1, dtype=bool)
        their_questions[question_of_cell[own_cells]] = True
        others_ranked = their_questions[question_of_cell] & (n_others > 0)  # the others' cells on their questions
        on_theirs = others_ranked[pairs.a] & others_ranked[pairs.b]
        if not on_theirs.any():
            continue
        a, b = pairs.a[on_theirs], pairs.b[on_theirs]
        others_mean = (rank_sum - np.where(ranked_by_them, own_rank, 0.0)) / np.maximum(n_others, 1)
        human = np.sign(others_mean[b] - others_mean[a])
        value = _acc_eq(human, -own_rank[a], -own_rank[b])
        if value is None:
            continue
        physicians[str(person)] = value
        for name, score in judge_cells.items():
            judge_value = _acc_eq(human, score[a], score[b])
            if judge_value is not None:
                judged[name][str(person)] = judge_value
    return physicians, judged


def _acc_eq(human: np.ndarray, score_a: np.ndarray, score_b: np.ndarray) -> float | None:
    """acc_eq at epsilon 0 over the pairs whose two cells are scored (NaN: not scored); ``None`` without any, as
    :func:`stats.correlation.pairwise_accuracy` gives it."""
    scored = ~(np.isnan(score_a) | np.isnan(score_b))
    if not scored.any():
        return None
    return float(correct_pairs(human[scored], score_a[scored] - score_b[scored], 0.0).mean())


def judge_meta_evaluation(
    rankings: pd.DataFrame,
    judges: Mapping[str, pd.DataFrame],
    *,
    exclude: Iterable = (),
    tie_calibrate: bool = False,
    n_permutations: int = DEFAULT_PERMUTATIONS,
    alpha: float = DEFAULT_ALPHA,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> JudgeMetaEvaluation:
    """Every figure of the module docstring for each judge (``judges``: name -> ``item, system, score``)."""
    exclude = tuple(exclude)
    if not judges:
        raise ValueError("no judge to evaluate")
    notes: list[str] = []
    figures: dict[str, JudgeFigures] = {}
    ranked = ranked_cells(rankings, exclude)  # the rankings' side, made once for every judge
    all_pairs = cell_pairs(ranked)  # every judge's pairs are these, restricted to the cells it scores
    items = ranked.cells["item"].to_numpy()
    judge_cells: dict[str, np.ndarray] = {}
    # per judge, over all_pairs: whether it scored both cells, and whether it got the pair right
    scored_pairs: dict[str, np.ndarray] = {}
    correct: dict[str, np.ndarray] = {}
    for name, scores in judges.items():
        on_cells = ranked_cell_scores(ranked, scores)  # looked up once for every figure of the judge
        joined = joined_on_cells(ranked, on_cells)
        acc = _pairwise_accuracy(joined, 0.0, n_resamples=n_resamples, seed=seed)
        tau_b, _ = _segment_tau(joined, "b", n_resamples=n_resamples, seed=seed)
        tau_c, _ = _segment_tau(joined, "c", n_resamples=n_resamples, seed=seed)
        score = judge_cells[name] = on_cells.score
        diff = score[all_pairs.a] - score[all_pairs.b]
        scored = scored_pairs[name] = ~np.isnan(diff)
        human, diff = all_pairs.human[scored], diff[scored]
        eps, calibrated, held_out = 0.0, None, None
        if tie_calibrate and len(human):
            cal = tie_calibration(human, diff)
            eps, calibrated = cal.epsilon, cal.acc_eq
            held = tie_calibration_held_out(human, diff, items[all_pairs.a[scored]], seed=seed)
            held_out = held.acc_eq if held else None
        correct[name] = np.zeros(len(scored))
        correct[name][scored] = correct_pairs(human, diff, eps)
        figures[name] = JudgeFigures(
            name, acc, epsilon=eps, acc_eq_calibrated=calibrated, acc_eq_held_out=held_out,
            segment_tau_b=tau_b, segment_tau_c=tau_c,
        )  # fmt: skip

    p_better: dict[tuple[str, str], float] = {}
    n_questions = len(all_pairs.question) and int(all_pairs.question.max()) + 1
    flips_for: dict[int, np.ndarray] = {}  # the same draws for every pair of judges tested on as many questions

    def better(a: str, b: str) -> float:
        if (a, b) not in p_better:
            # the pairs both judges scored, summed per question (questions in sorted order)
            both = scored_pairs[a] & scored_pairs[b]
            question = all_pairs.question[both]
            size = np.bincount(question, minlength=n_questions)
            asked = size > 0
            if not asked.any():
                p_better[(a, b)] = 1.0
            else:
                n_asked = int(asked.sum())
                if n_asked not in flips_for:
                    flips_for[n_asked] = sign_flips(n_permutations, n_asked, seed)
                p_better[(a, b)] = paired_permutation_test(
                    np.bincount(question, weights=correct[a][both], minlength=n_questions)[asked],
                    np.bincount(question, weights=correct[b][both], minlength=n_questions)[asked],
                    size[asked],
                    n_resamples=n_permutations,
                    seed=seed,
                    flips=flips_for[n_asked],
                ).p_value
        return p_better[(a, b)]

    defined = {name: f.acc_eq.value for name, f in figures.items() if f.acc_eq.value is not None}
    clusters = significance_clusters(defined, better, alpha=alpha) if n_permutations > 0 and defined else {}
    physicians, judged = _leave_one_out(ranked, all_pairs, judge_cells)
    if len(physicians) < 2:
        notes.append("fewer than two physicians with shared questions: no human ceiling")
    for name, figs in list(figures.items()):
        ceiling = None
        if len(physicians) >= 2 and judged[name]:
            ceiling = human_ceiling(list(physicians.values()), float(np.mean(list(judged[name].values()))))
        figures[name] = JudgeFigures(**{**figs.__dict__, "cluster": clusters.get(name), "ceiling": ceiling})
    if tie_calibrate:
        notes.append(
            "calibrated acc_eq chooses epsilon on the same pairs it scores, so it is optimistic; "
            "the held-out figure chooses it on one half of the questions and scores the other half"
        )
    return JudgeMetaEvaluation(judges=figures, p_better=p_better, physicians=physicians, notes=tuple(notes))
