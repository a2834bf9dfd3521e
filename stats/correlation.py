"""Metric meta-evaluation: how well an automatic metric tracks the physicians' rankings (pure).

Inputs: rankings ``item, annotator, answer, rank, system`` (rank 1 = best) and scores ``item, system, score``
(higher = better). Systems in ``exclude`` (the reference answer, which scores itself 1.0) are dropped *before*
re-ranking each ranker's ranking with average ties. The human consensus of a question is the mean rank of
each system over its rankers; because rank 1 is best, ranks are **negated** before being set against scores.
Only (question, system) cells with both a human rank and a score are used; a note counts the rest. No
complete ranking block is required here: a system's mean rank is over the rankers who ranked it.

Several metrics set against the same rankings share the rankings' side: :func:`stats.cells.ranked_cells` makes it once, and
every statistic takes it in place of the rankings; :func:`metric_correlations` gives one metric's four figures
from one join of its scores.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import numpy as np
import pandas as pd
from scipy.stats import pearsonr, rankdata, spearmanr

from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_sums, with_interval
from .cells import Joined, Rankings, joined_cells, pair_rows
from .kendall import tau_b_rows, tau_c_rows
from .leaderboard import (
    DEFAULT_BT_ALPHA,
    bradley_terry,
    bradley_terry_resampled,
    win_contributions,
)
from .results import StatResult, undefined
from .ties import correct_pairs


def metric_correlations(
    rankings: Rankings,
    scores: pd.DataFrame,
    *,
    exclude: Iterable = (),
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, StatResult]:
    """One metric's segment tau-b, pairwise accuracy and system-level Pearson and Spearman, from one join of its
    scores with the rankings (each the same as its own function's result)."""
    joined = joined_cells(rankings, scores, exclude)
    kw = {"n_resamples": n_resamples, "seed": seed}
    return {
        "segment_tau_b": _segment_tau(joined, "b", **kw)[0],
        "pairwise_accuracy": _pairwise_accuracy(joined, 0.0, **kw),
        "system_pearson": _system_correlation(joined, "pearson", "mean_rank", DEFAULT_BT_ALPHA, **kw),
        "system_spearman": _system_correlation(joined, "spearman", "mean_rank", DEFAULT_BT_ALPHA, **kw),
    }


def _item_slices(cells: pd.DataFrame):
    items = cells["item"].to_numpy()
    if not len(items):  # no scored cell was ranked
        return items, np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    starts = np.flatnonzero(np.r_[True, items[1:] != items[:-1]])
    ends = np.r_[starts[1:], len(items)]
    return items[starts], starts, ends


def segment_tau_b(
    rankings: Rankings,
    scores: pd.DataFrame,
    *,
    exclude: Iterable = (),
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[StatResult, pd.Series]:
    """Per-question Kendall tau-b averaged over questions (see :func:`segment_tau`)."""
    return segment_tau(rankings, scores, variant="b", exclude=exclude, n_resamples=n_resamples, seed=seed)


def segment_tau(
    rankings: Rankings,
    scores: pd.DataFrame,
    *,
    variant: Literal["b", "c"] = "b",
    exclude: Iterable = (),
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[StatResult, pd.Series]:
    """Per-question Kendall tau (variant b or c) between −(mean human rank) and metric score, averaged over questions.

    tau as ``scipy.stats.kendalltau(variant=...)`` gives it (Kendall 1945; tau-c: Stuart 1953; computed for all
    questions at once, :mod:`stats.kendall`); undefined for a question
    with fewer than two systems or with all-tied humans or scores. Returns the pooled result (interval: resampling
    the questions with a defined tau) and the per-question Series (NaN where undefined).
    """
    return _segment_tau(joined_cells(rankings, scores, exclude), variant, n_resamples=n_resamples, seed=seed)


def _segment_tau(
    joined: Joined, variant: Literal["b", "c"], *, n_resamples: int, seed: int
) -> tuple[StatResult, pd.Series]:
    name = f"segment_tau_{variant}"
    cells, used, notes = joined
    names, starts, ends = _item_slices(cells)
    human = -cells["mean_rank"].to_numpy(dtype=float)
    score = cells["score"].to_numpy(dtype=float)
    taus = np.full(len(names), np.nan)
    # every question with the same number of systems at once (identical values to scipy's, see stats.kendall)
    tau_rows = tau_b_rows if variant == "b" else tau_c_rows
    lengths = ends - starts
    for length in np.unique(lengths[lengths >= 2]):
        rows = np.flatnonzero(lengths == length)
        cells_at = starts[rows][:, None] + np.arange(length)[None, :]
        taus[rows] = tau_rows(human[cells_at], score[cells_at])
    per_item = pd.Series(taus, index=pd.Index(names, name="item"), name=f"tau_{variant}")
    ok = np.isfinite(taus)
    n_raters = int(used["annotator"].nunique())
    n_sys = int(cells["system"].nunique())
    if not ok.any():
        return undefined(
            name,
            "no question has two or more systems with varying human ranks and scores",
            n_raters=n_raters,
            notes=notes,
            n_systems=n_sys,
        ), per_item
    if (~ok).any():
        notes += (f"{int((~ok).sum())} question(s) with tau undefined (ties or < 2 systems) left out",)
    vals = taus[ok]
    res = StatResult(
        name,
        float(vals.mean()),
        n_items=len(vals),
        n_raters=n_raters,
        notes=notes,
        n_systems=n_sys,
    )
    if n_resamples > 0:
        k = len(vals)
        res = with_interval(res, bootstrap_sums(vals, lambda s: s[:, 0] / k, n_resamples=n_resamples, seed=seed))
    return res, per_item


def within_question_pairs(
    rankings: Rankings, scores: pd.DataFrame, *, exclude: Iterable = ()
) -> tuple[pd.DataFrame, int, int, tuple[str, ...]]:
    """Every pair of systems within a question: ``item``, ``system_a``, ``system_b``, ``human`` (+1 when the physicians put the first system
    higher, −1 lower, 0 tied on mean rank) and ``diff`` (first system's score minus the second's); plus the number
    of rankers and of systems used, and notes."""
    return _within_question_pairs(joined_cells(rankings, scores, exclude))


def _within_question_pairs(joined: Joined) -> tuple[pd.DataFrame, int, int, tuple[str, ...]]:
    cells, used, notes = joined
    a, b = pair_rows(cells)
    mean_rank, score = cells["mean_rank"].to_numpy(float), cells["score"].to_numpy(float)
    item, system = cells["item"].to_numpy(), cells["system"].to_numpy()
    pairs = pd.DataFrame(
        {
            "item": item[a],
            "system_a": system[a],
            "system_b": system[b],
            "human": np.sign(mean_rank[b] - mean_rank[a]),
            "diff": score[a] - score[b],
        }
    )
    return pairs, int(used["annotator"].nunique()), int(cells["system"].nunique()), notes


def pairwise_accuracy(
    rankings: Rankings,
    scores: pd.DataFrame,
    *,
    exclude: Iterable = (),
    metric_tie_epsilon: float = 0.0,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> StatResult:
    """Tie-aware pairwise accuracy acc_eq (Deutsch, Foster & Freitag 2023, "Ties Matter", EMNLP).

    Over every pair of systems within a question: correct when the human consensus and the metric order the
    pair the same way, *or* when both call it a tie (human tie: equal mean rank; metric tie: |score
    difference| <= ``metric_tie_epsilon``, default exact equality); see :mod:`stats.ties`. acc = (C + T_hm) /
    (C + D + T_h + T_m + T_hm), pooled over all within-question pairs. A metric that never ties cannot get
    human-tied pairs right, so its ceiling is below 1. Interval: resampling questions.
    """
    joined = joined_cells(rankings, scores, exclude)
    return _pairwise_accuracy(joined, metric_tie_epsilon, n_resamples=n_resamples, seed=seed)


def _pairwise_accuracy(joined: Joined, metric_tie_epsilon: float, *, n_resamples: int, seed: int) -> StatResult:
    pairs, n_raters, n_systems, notes = _within_question_pairs(joined)
    if len(pairs) == 0:
        return undefined(
            "pairwise_accuracy", "no question has two or more scored systems", n_raters=n_raters, notes=notes
        )
    correct = correct_pairs(pairs["human"], pairs["diff"], metric_tie_epsilon).astype(float)
    per_item = pd.DataFrame({"item": pairs["item"], "c": correct, "n": 1.0}).groupby("item", sort=False).sum()
    tied = int((pairs["human"] == 0).sum())
    if tied:
        notes += (f"{tied} of {len(pairs)} pairs are human ties (counted correct only if the metric ties too)",)
    res = StatResult(
        "pairwise_accuracy",
        float(correct.mean()),
        n_items=len(per_item),
        n_raters=n_raters,
        notes=notes,
        n_systems=n_systems,
    )
    if n_resamples <= 0:
        return res
    contrib = per_item[["c", "n"]].to_numpy(dtype=float)
    return with_interval(res, bootstrap_sums(contrib, lambda s: s[:, 0] / s[:, 1], n_resamples=n_resamples, seed=seed))


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    den = np.sqrt((xc**2).sum(axis=1) * (yc**2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=1) / den
    return np.where(den > 1e-300, np.clip(r, -1.0, 1.0), np.nan)


def system_correlation(
    rankings: Rankings,
    scores: pd.DataFrame,
    *,
    method: Literal["pearson", "spearman"] = "pearson",
    human: Literal["mean_rank", "bradley_terry"] = "mean_rank",
    exclude: Iterable = (),
    bt_alpha: float = DEFAULT_BT_ALPHA,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> StatResult:
    """System-level Pearson or Spearman correlation (``scipy.stats.pearsonr`` / ``spearmanr``).

    Human score of a system: −(mean rank over its (question, ranker) cells) or its Bradley-Terry strength
    (see :mod:`stats.leaderboard`); metric score: mean score over its questions. Undefined with
    fewer than three systems or constant scores. Interval: resampling questions (a resample that loses a
    system entirely is undefined and left out).
    """
    joined = joined_cells(rankings, scores, exclude)
    return _system_correlation(joined, method, human, bt_alpha, n_resamples=n_resamples, seed=seed)


def _system_correlation(
    joined: Joined,
    method: Literal["pearson", "spearman"],
    human: Literal["mean_rank", "bradley_terry"],
    bt_alpha: float,
    *,
    n_resamples: int,
    seed: int,
) -> StatResult:
    name = f"system_{method}" + ("_bt" if human == "bradley_terry" else "")
    cells, used, notes = joined
    systems = np.array(sorted(pd.unique(cells["system"]), key=str), dtype=object)
    items = pd.unique(cells["item"])
    n_raters = int(used["annotator"].nunique())
    if len(systems) < 3:
        return undefined(
            name,
            f"{len(systems)} system{'' if len(systems) == 1 else 's'}: a system-level correlation needs at least three",
            n_items=len(items),
            n_raters=n_raters,
            notes=notes,
            n_systems=len(systems),
        )
    s, q = len(systems), len(items)
    qi = pd.Index(items).get_indexer(cells["item"])
    si = pd.Index(systems).get_indexer(cells["system"])
    mats = np.zeros((4, q, s))
    for k, col in enumerate(("rank_sum", "n_rankers", "score")):
        np.add.at(mats[k], (qi, si), cells[col].to_numpy(dtype=float))
    np.add.at(mats[3], (qi, si), 1.0)
    contrib = mats.transpose(1, 0, 2).reshape(q, 4 * s)
    wins = win_contributions(used, systems, items) if human == "bradley_terry" else None
    point_bt = bradley_terry(wins.sum(axis=0), bt_alpha) if wins is not None else None

    def corr(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if method == "spearman":
            bad = ~np.isfinite(x).all(axis=1) | ~np.isfinite(y).all(axis=1)
            x, y = rankdata(np.nan_to_num(x), axis=1), rankdata(np.nan_to_num(y), axis=1)
            return np.where(bad, np.nan, _rowwise_pearson(x, y))
        return _rowwise_pearson(x, y)

    sums = contrib.sum(axis=0).reshape(4, s)
    h = point_bt if point_bt is not None else -sums[0] / sums[1]
    m = sums[2] / sums[3]
    if not (np.isfinite(h).all() and np.ptp(h) > 0 and np.ptp(m) > 0):
        return undefined(
            name,
            "human or metric scores are constant (or Bradley-Terry failed) across systems",
            n_items=q,
            n_raters=n_raters,
            notes=notes,
            n_systems=s,
        )
    fn = pearsonr if method == "pearson" else spearmanr
    res = StatResult(name, float(fn(h, m).statistic), n_items=q, n_raters=n_raters, notes=notes, n_systems=s)
    if n_resamples <= 0 or q < 2:
        return res

    def stat(sums_b: np.ndarray) -> np.ndarray:
        parts = sums_b[:, : 4 * s].reshape(-1, 4, s)
        with np.errstate(invalid="ignore", divide="ignore"):
            mb = parts[:, 2] / parts[:, 3]
            if wins is None:
                hb = -parts[:, 0] / parts[:, 1]
            else:
                hb = bradley_terry_resampled(sums_b[:, 4 * s :].reshape(-1, s, s), bt_alpha, point_bt)
        return corr(hb, mb)

    if wins is not None:
        contrib = np.hstack([contrib, wins.reshape(q, s * s)])
    return with_interval(res, bootstrap_sums(contrib, stat, n_resamples=n_resamples, seed=seed))
