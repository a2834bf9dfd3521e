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
from .correlation import Rankings, pairwise_accuracy, ranked_cells, segment_tau, within_question_pairs
from .leaderboard import system_rank_frame
from .results import StatResult
from .significance import (
    DEFAULT_ALPHA,
    DEFAULT_PERMUTATIONS,
    HumanCeiling,
    human_ceiling,
    paired_permutation_test,
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


def _pairs(ranked: Rankings, scores: pd.DataFrame) -> pd.DataFrame:
    pairs, *_ = within_question_pairs(ranked, scores)
    return pairs


def leave_one_out(
    rankings: pd.DataFrame, judges: Mapping[str, pd.DataFrame], *, exclude: Iterable = ()
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Each physician's acc_eq against the other physicians, and each judge's against the same consensus.

    Returns (physician -> value, judge -> {physician -> value}). A physician whose questions nobody else ranked is
    left out (nothing to compare with).
    """
    frame = system_rank_frame(rankings, exclude)
    physicians: dict[str, float] = {}
    judged: dict[str, dict[str, float]] = {name: {} for name in judges}
    # questions as integers, for the judges' scores too: "on this physician's questions" is then an array look-up
    # (a large study asks it for every physician and judge)
    items = pd.Index(pd.unique(frame["item"]))
    item_of_row = items.get_indexer(frame["item"])
    item_of_score = {name: items.get_indexer(scores["item"]) for name, scores in judges.items()}
    annotators = frame["annotator"].to_numpy()
    for person in sorted(pd.unique(annotators), key=str):
        own_rows = annotators == person
        own = frame[own_rows]
        theirs = np.zeros(len(items) + 1, dtype=bool)  # the last place: a judge's question nobody ranked
        theirs[item_of_row[own_rows]] = True
        others = frame[~own_rows & theirs[item_of_row]]
        if others.empty:
            continue
        others_ranked = ranked_cells(others)  # once for the physician and every judge
        as_scores = pd.DataFrame({"item": own["item"], "system": own["system"], "score": -own["rank"]})
        value = pairwise_accuracy(others_ranked, as_scores, n_resamples=0).value
        if value is None:
            continue
        physicians[str(person)] = value
        for name, scores in judges.items():
            mine = scores[theirs[item_of_score[name]]]
            judge_value = pairwise_accuracy(others_ranked, mine, n_resamples=0).value if len(mine) else None
            if judge_value is not None:
                judged[name][str(person)] = judge_value
    return physicians, judged


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
    pairs: dict[str, pd.DataFrame] = {}
    ranked = ranked_cells(rankings, exclude)  # the rankings' side, made once for every judge
    for name, scores in judges.items():
        acc = pairwise_accuracy(ranked, scores, n_resamples=n_resamples, seed=seed)
        tau_b, _ = segment_tau(ranked, scores, variant="b", n_resamples=n_resamples, seed=seed)
        tau_c, _ = segment_tau(ranked, scores, variant="c", n_resamples=n_resamples, seed=seed)
        p = _pairs(ranked, scores)
        eps, calibrated, held_out = 0.0, None, None
        if tie_calibrate and len(p):
            cal = tie_calibration(p["human"], p["diff"])
            eps, calibrated = cal.epsilon, cal.acc_eq
            held = tie_calibration_held_out(p["human"], p["diff"], p["item"], seed=seed)
            held_out = held.acc_eq if held else None
        p = p.assign(correct=correct_pairs(p["human"], p["diff"], eps).astype(float))
        pairs[name] = p
        figures[name] = JudgeFigures(
            name, acc, epsilon=eps, acc_eq_calibrated=calibrated, acc_eq_held_out=held_out,
            segment_tau_b=tau_b, segment_tau_c=tau_c,
        )  # fmt: skip

    p_better: dict[tuple[str, str], float] = {}

    def better(a: str, b: str) -> float:
        if (a, b) not in p_better:
            joined = pairs[a].merge(pairs[b], on=["item", "system_a", "system_b"], suffixes=("_a", "_b"))
            per_item = joined.groupby("item")[["correct_a", "correct_b"]].agg(["sum", "size"])
            if len(per_item) == 0:
                p_better[(a, b)] = 1.0
            else:
                p_better[(a, b)] = paired_permutation_test(
                    per_item[("correct_a", "sum")],
                    per_item[("correct_b", "sum")],
                    per_item[("correct_a", "size")],
                    n_resamples=n_permutations,
                    seed=seed,
                ).p_value
        return p_better[(a, b)]

    defined = {name: f.acc_eq.value for name, f in figures.items() if f.acc_eq.value is not None}
    clusters = significance_clusters(defined, better, alpha=alpha) if n_permutations > 0 and defined else {}
    physicians, judged = leave_one_out(rankings, judges, exclude=exclude)
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
