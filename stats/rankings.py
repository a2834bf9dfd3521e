"""Agreement between rankers who each rank the answers of one question (pure; numpy, pandas, scipy).

Input: a long DataFrame ``item, annotator, answer, rank`` (rank 1 = best; equal ranks are ties). Per question
the rankers are the "raters" and the answers the "objects" being ranked.

Incomplete rankings, per question: rankers who ranked fewer than two answers are dropped, then only the
answers ranked by *every* remaining ranker are kept, and each ranker's kept ranks are re-ranked ``1..n`` with
ties given their average rank (``scipy.stats.rankdata(method="average")``). Notes count what was dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_sums, with_interval
from .kendall import tau_b_rows
from .results import StatResult, undefined

RANK_COLUMNS = ("item", "annotator", "answer", "rank")


@dataclass(frozen=True)
class PreparedRankings:
    """Complete per-question ranking blocks; ``frame`` has the re-ranked ``rank`` column (1 = best)."""

    frame: pd.DataFrame
    dropped_reasons: dict  # item -> why the question has no usable block
    notes: tuple[str, ...]


@dataclass(frozen=True)
class PerItemResult:
    """A pooled statistic (mean over questions, bootstrap over questions) plus the per-question table.

    ``per_item`` has columns ``value`` (NaN where undefined), ``n_raters``, ``n_answers``,
    ``undefined_reason``, indexed by item.
    """

    pooled: StatResult
    per_item: pd.DataFrame = field(repr=False)


def validate_rank_frame(df: pd.DataFrame, columns: tuple[str, ...] = RANK_COLUMNS) -> pd.DataFrame:
    """Check columns, numeric finite ranks and one rank per (item, annotator, answer); returns a copy."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"rankings lack column(s) {missing}; have {list(df.columns)}")
    out = df.loc[:, list(columns)].copy()
    rank = pd.to_numeric(out["rank"], errors="coerce")
    bad = ~np.isfinite(rank.to_numpy(dtype=float))
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise ValueError(f"rank {df['rank'].iloc[pos]!r} at row {pos} is not a finite number")
    out["rank"] = rank.astype(float)
    dup = out.duplicated(["item", "annotator", "answer"])
    if dup.any():
        row = out[dup].iloc[0]
        raise ValueError(f"answer {row['answer']!r} of item {row['item']!r} ranked twice by {row['annotator']!r}")
    return out


def prepare_rankings(df: pd.DataFrame, extra_columns: tuple[str, ...] = ()) -> PreparedRankings:
    """Apply the incomplete-ranking policy of this module and re-rank with average ties."""
    frame = validate_rank_frame(df, RANK_COLUMNS + tuple(extra_columns))
    all_items = pd.unique(frame["item"])
    n_rows = len(frame)
    per_rater = frame.groupby(["item", "annotator"], sort=False)["answer"].transform("size")
    frame = frame[per_rater >= 2]
    m = frame.groupby("item", sort=False)["annotator"].transform("nunique")
    per_answer = frame.groupby(["item", "answer"], sort=False)["annotator"].transform("size")
    frame = frame[(per_answer == m) & (m >= 2)]
    n = frame.groupby(["item", "annotator"], sort=False)["answer"].transform("size")
    frame = frame[n >= 2].copy()
    frame["rank"] = frame.groupby(["item", "annotator"], sort=False)["rank"].rank(method="average")
    frame = frame.sort_values(["item", "annotator", "answer"], kind="stable").reset_index(drop=True)

    kept = set(pd.unique(frame["item"]))
    raters = df.groupby("item")["annotator"].nunique()
    dropped = {}
    for item in all_items:
        if item in kept:
            continue
        dropped[item] = (
            "only one ranker" if raters.get(item, 0) < 2 else "fewer than two answers ranked by two or more rankers"
        )
    notes = []
    if len(frame) < n_rows:
        notes.append(f"{n_rows - len(frame)} ranking row(s) outside a complete per-question block left out")
    return PreparedRankings(frame, dropped, tuple(notes))


def _blocks(frame: pd.DataFrame):
    """Yield ``(items, R)`` with ``R`` of shape ``(G, m, n)`` for all questions sharing a block shape."""
    sizes = frame.groupby("item", sort=False).agg(m=("annotator", "nunique"), rows=("rank", "size"))
    sizes["n"] = sizes["rows"] // sizes["m"]
    for (m, n), grp in sizes.groupby(["m", "n"], sort=False):
        sub = frame[frame["item"].isin(grp.index)]
        items = pd.unique(sub["item"])
        yield items, sub["rank"].to_numpy(dtype=float).reshape(len(items), int(m), int(n))


def kendall_w_blocks(r: np.ndarray) -> np.ndarray:
    """Tie-corrected Kendall's W for ranking blocks ``r`` of shape ``(G, m, n)`` (NaN where undefined).

    W = 12 S / (m^2 (n^3 - n) - m sum_j T_j), S = sum_i (R_i - m (n + 1) / 2)^2 with R_i the rank sum of
    object i, T_j = sum over tie groups of ranker j of (t^3 - t) (Kendall & Babington Smith 1939; Siegel &
    Castellan 1988, *Nonparametric Statistics*, eq. 9.18). Equals the tie-corrected Friedman statistic
    divided by m (n - 1).
    """
    _, m, n = r.shape
    s = ((r.sum(axis=1) - m * (n + 1) / 2.0) ** 2).sum(axis=1)
    # sum over tie groups of (t^3 - t) == sum over elements of (t_e^2 - 1), t_e = size of e's tie group
    t_e = (r[:, :, :, None] == r[:, :, None, :]).sum(axis=3)
    ties = (t_e.astype(float) ** 2 - 1.0).sum(axis=(1, 2))
    den = m**2 * (n**3 - n) - m * ties
    with np.errstate(invalid="ignore", divide="ignore"):
        w = 12.0 * s / den
    return np.where(den > 0, w, np.nan)


def _pooled(name: str, table: pd.DataFrame, raters: int, notes, n_resamples: int, seed: int) -> StatResult:
    ok = table["value"].notna()
    vals = table.loc[ok, "value"].to_numpy(dtype=float)
    if len(vals) == 0:
        # said once, as a reason ("Kendall's W undefined: only one ranker on every question"): the old wording
        # began "undefined for every question", and every page put "undefined" in front of it again
        reasons = sorted(set(table["undefined_reason"].dropna()))
        if not reasons:
            why = "no questions"
        elif len(reasons) == 1:
            why = f"{reasons[0]} on every question"
        else:
            why = "no question has a value (" + "; ".join(reasons) + ")"
        return undefined(name, why)
    n_undef = int((~ok).sum())
    if n_undef:
        notes = tuple(notes) + (f"{n_undef} question(s) undefined and left out of the mean",)
    res = StatResult(name, float(vals.mean()), n_items=len(vals), n_raters=raters, notes=tuple(notes))
    if n_resamples <= 0:
        return res
    k = len(vals)
    return with_interval(res, bootstrap_sums(vals, lambda s: s[:, 0] / k, n_resamples=n_resamples, seed=seed))


def _item_table(prep: PreparedRankings, values: dict, reasons: dict, shape: dict) -> pd.DataFrame:
    rows = []
    for item, why in prep.dropped_reasons.items():
        rows.append((item, np.nan, 0, 0, why))
    for item, v in values.items():
        m, n = shape[item]
        rows.append((item, v, m, n, None if np.isfinite(v) else reasons.get(item)))
    return pd.DataFrame(rows, columns=["item", "value", "n_raters", "n_answers", "undefined_reason"]).set_index("item")


def kendall_w(
    rankings: pd.DataFrame, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> PerItemResult:
    """Kendall's W per question (rankers x answers) and pooled as the mean over questions.

    Undefined for a question with one ranker, fewer than two commonly ranked answers, or when every ranker
    tied all answers (zero denominator). The pooled interval resamples questions.
    """
    prep = prepare_rankings(rankings)
    values, shape, reasons = {}, {}, {}
    for items, r in _blocks(prep.frame):
        w = kendall_w_blocks(r)
        for item, v in zip(items, w, strict=True):
            values[item] = float(v)
            shape[item] = r.shape[1:]
            reasons[item] = "every ranker tied all answers"
    table = _item_table(prep, values, reasons, shape)
    raters = prep.frame["annotator"].nunique()
    return PerItemResult(_pooled("kendall_w", table, raters, prep.notes, n_resamples, seed), table)


def mean_pairwise_tau_b(
    rankings: pd.DataFrame, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> PerItemResult:
    """Mean pairwise Kendall tau-b between rankers (``scipy.stats.kendalltau(variant="b")``).

    tau_b = (n_c - n_d) / sqrt((n_0 - n_1)(n_0 - n_2)) (Kendall 1945). Per question: mean over ranker pairs
    with a defined tau (a ranker who tied everything has none); pooled: mean over questions, interval by
    resampling questions.
    """
    prep = prepare_rankings(rankings)
    values, shape, reasons = {}, {}, {}
    for items, r in _blocks(prep.frame):
        # tau-b of every pair of rankers on every question of this block shape at once (NaN where a ranker
        # tied all answers: that pair has no tau); each question's mean over its defined pairs, in pair order
        pair_taus = np.column_stack([tau_b_rows(r[:, a], r[:, b]) for a, b in combinations(range(r.shape[1]), 2)])
        for item, taus in zip(items, pair_taus, strict=True):
            taus = taus[np.isfinite(taus)]
            values[item] = float(np.mean(taus)) if len(taus) else np.nan
            shape[item] = r.shape[1:]
            reasons[item] = "no pair of rankers with a defined tau-b (all-tied rankings)"
    table = _item_table(prep, values, reasons, shape)
    raters = prep.frame["annotator"].nunique()
    return PerItemResult(_pooled("mean_pairwise_tau_b", table, raters, prep.notes, n_resamples, seed), table)
