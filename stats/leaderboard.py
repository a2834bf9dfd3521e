"""Human leaderboard from rankings: Bradley-Terry strengths, win rates, mean ranks (pure; choix, numpy).

Input: long rankings ``item, annotator, answer, rank, system`` (rank 1 = best). Every ranker's ranking of a
question is turned into pairwise outcomes between the systems it ranked: the better-ranked system wins; a tie
counts as half a win for each side (so the dense win matrix may hold halves; the Davidson tie model is not
used). Excluded systems are removed before anything else and the remaining ranks re-ranked (average ties).

Bradley-Terry (Bradley & Terry 1952; Zermelo 1929): P(i beats j) = e^{theta_i} / (e^{theta_i} + e^{theta_j}),
fitted by ``choix.ilsr_pairwise_dense`` (iterative Luce Spectral Ranking, Maystre & Grossglauser 2015), whose
fixed point is the maximum-likelihood estimate. Strengths are choix's centred log-scale theta (mean 0).

Prior: ``alpha`` (default 0.01) initialises every transition rate of the LSR Markov chain. At the fixed point
this is the same as adding alpha * (e^{theta_i} + e^{theta_j}) virtual wins each way to every pair of systems
(about 2 * alpha, since the e^{theta} have geometric mean 1) -- choix's docs call it loosely a Beta prior on
each pair's outcome. It keeps the estimate finite when a system never won or never lost and when the
comparison graph is disconnected; in the latter case the strengths of different components are tied to each
other *only* by this prior, and a note says so. Intervals resample questions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import choix
import numpy as np
import pandas as pd
from scipy.sparse.csgraph import connected_components

from .bootstrap import (
    CI_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    interval_containing,
    percentile_interval,
    resample_counts,
)
from .rankings import RANK_COLUMNS, validate_rank_frame
from .results import FLOAT_TOLERANCE

DEFAULT_BT_ALPHA = 0.01


def system_rank_frame(rankings: pd.DataFrame, exclude: Iterable = (), system_col: str = "system") -> pd.DataFrame:
    """Validated ``item, annotator, system, rank`` with excluded systems dropped and ranks re-ranked."""
    df = rankings.rename(columns={system_col: "system"}) if system_col != "system" else rankings
    frame = validate_rank_frame(df, RANK_COLUMNS + ("system",))
    dup = frame.duplicated(["item", "annotator", "system"])
    if dup.any():
        row = frame[dup].iloc[0]
        raise ValueError(f"system {row['system']!r} ranked twice by {row['annotator']!r} on item {row['item']!r}")
    frame = frame[~frame["system"].isin(set(exclude))].copy()
    frame["rank"] = frame.groupby(["item", "annotator"], sort=False)["rank"].rank(method="average")
    return frame


def win_contributions(frame: pd.DataFrame, systems: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Per-question win matrices ``(n_items, S, S)``: ``[q, a, b]`` = wins of a over b (ties: 0.5 each)."""
    s = len(systems)
    f = pd.DataFrame(
        {
            "q": pd.Index(items).get_indexer(frame["item"]),
            "annotator": frame["annotator"].to_numpy(),
            "s": pd.Index(systems).get_indexer(frame["system"]),
            "rank": frame["rank"].to_numpy(dtype=float),
        }
    )
    pairs = f.merge(f, on=["q", "annotator"], suffixes=("_a", "_b"))
    pairs = pairs[pairs["s_a"] != pairs["s_b"]]
    win = (pairs["rank_a"] < pairs["rank_b"]).to_numpy(float) + 0.5 * (pairs["rank_a"] == pairs["rank_b"]).to_numpy(
        float
    )
    flat = (pairs["q"].to_numpy() * s + pairs["s_a"].to_numpy()) * s + pairs["s_b"].to_numpy()
    return np.bincount(flat, weights=win, minlength=len(items) * s * s).reshape(len(items), s, s)


def bradley_terry(wins: np.ndarray, alpha: float = DEFAULT_BT_ALPHA, initial: np.ndarray | None = None) -> np.ndarray:
    """Centred log-strengths from a dense win matrix via ``choix.ilsr_pairwise_dense``; NaN if it fails."""
    try:
        return choix.ilsr_pairwise_dense(wins, alpha=alpha, initial_params=initial, max_iter=500)
    except (RuntimeError, ValueError, FloatingPointError):
        return np.full(wins.shape[0], np.nan)


def bradley_terry_resampled(win_sums: np.ndarray, alpha: float, initial: np.ndarray) -> np.ndarray:
    """Strengths for each resampled win matrix ``(B, S, S)``, warm-started at the point estimate."""
    with np.errstate(all="ignore"):
        return np.stack([bradley_terry(w, alpha, initial) for w in win_sums])


@dataclass(frozen=True)
class Standing:
    """One system on the leaderboard; ``*_ci`` are percentile bootstrap 95 % intervals over questions."""

    system: object
    strength: float | None
    strength_ci: tuple[float, float] | None
    win_rate: float | None
    win_rate_ci: tuple[float, float] | None
    mean_rank: float | None
    mean_rank_ci: tuple[float, float] | None
    n_comparisons: float
    n_items: int


@dataclass(frozen=True)
class Leaderboard:
    """Systems sorted by Bradley-Terry strength (best first)."""

    standings: tuple[Standing, ...]
    n_items: int
    n_raters: int
    alpha: float
    connected: bool
    undefined_reason: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    n_resamples: int = 0

    def strengths(self) -> dict:
        return {s.system: s.strength for s in self.standings}

    def to_frame(self) -> pd.DataFrame:
        return (
            pd.DataFrame([s.__dict__ for s in self.standings]).set_index("system")
            if self.standings
            else (pd.DataFrame())
        )


def _ci(lo: np.ndarray, hi: np.ndarray, i: int) -> tuple[float, float] | None:
    return (float(lo[i]), float(hi[i])) if np.isfinite(lo[i]) and np.isfinite(hi[i]) else None


def _rates(wins: np.ndarray) -> np.ndarray:
    games = wins.sum(axis=-1) + wins.sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(games > 0, wins.sum(axis=-1) / games, np.nan)


def bradley_terry_leaderboard(
    rankings: pd.DataFrame,
    *,
    exclude: Iterable = (),
    alpha: float = DEFAULT_BT_ALPHA,
    system_col: str = "system",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Leaderboard:
    """Bradley-Terry leaderboard with win rates ((wins + ties / 2) / comparisons) and mean ranks.

    Mean rank: mean over (question, ranker) of the system's rank after exclusion (1 = best). All three
    carry percentile intervals from resampling questions (the same resamples for all of them), each widened where
    needed to contain its estimate (:func:`stats.bootstrap.interval_containing`).
    """
    frame = system_rank_frame(rankings, exclude, system_col)
    systems = np.array(sorted(pd.unique(frame["system"]), key=str), dtype=object)
    items = pd.unique(frame["item"])
    n_raters = int(frame["annotator"].nunique())
    if len(systems) < 2:
        return Leaderboard(
            (),
            len(items),
            n_raters,
            alpha,
            False,
            f"{len(systems)} system{'' if len(systems) == 1 else 's'}: nothing to compare",
        )
    per_q = win_contributions(frame, systems, items)
    wins = per_q.sum(axis=0)
    if wins.sum() == 0:
        return Leaderboard((), len(items), n_raters, alpha, False, "no two systems were ranked by the same ranker")
    s = len(systems)
    n_comp, _ = connected_components((wins + wins.T) > 0, directed=False)
    n_strong, _ = connected_components(wins > 0, directed=True, connection="strong")
    notes = []
    if n_comp > 1:
        notes.append(
            f"the comparison graph has {n_comp} disconnected parts: strengths across parts are set by the "
            f"fit's small regularisation ({alpha:g}) only"
        )
    elif n_strong > 1:
        notes.append(
            "some system never won (or never lost) against part of the field: the maximum-likelihood "
            f"strength is infinite there and the fit's small regularisation ({alpha:g}) keeps it finite"
        )
    strength = bradley_terry(wins, alpha)
    if not np.isfinite(strength).all():
        notes.append("Bradley-Terry did not converge")
    qi = pd.Index(items).get_indexer(frame["item"])
    si = pd.Index(systems).get_indexer(frame["system"])
    rank_sum = np.zeros((len(items), s))
    rank_n = np.zeros((len(items), s))
    np.add.at(rank_sum, (qi, si), frame["rank"].to_numpy(dtype=float))
    np.add.at(rank_n, (qi, si), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_rank = rank_sum.sum(0) / rank_n.sum(0)
    win_rate = _rates(wins)
    games = wins.sum(axis=1) + wins.sum(axis=0)

    cis = {k: (np.full(s, np.nan), np.full(s, np.nan)) for k in ("strength", "win", "rank")}
    if n_resamples > 0 and len(items) >= 2:
        counts = resample_counts(len(items), n_resamples, seed)
        w_b = (counts @ per_q.reshape(len(items), s * s)).reshape(-1, s, s)
        init = strength if np.isfinite(strength).all() else None
        cis["strength"] = percentile_interval(bradley_terry_resampled(w_b, alpha, init), CI_LEVEL)
        cis["win"] = percentile_interval(_rates(w_b), CI_LEVEL)
        with np.errstate(invalid="ignore", divide="ignore"):
            cis["rank"] = percentile_interval((counts @ rank_sum) / (counts @ rank_n), CI_LEVEL)

    estimates = {"strength": strength, "win": win_rate, "rank": mean_rank}
    widened = False
    for key, (low, high) in cis.items():
        cis[key] = interval_containing(estimates[key], low, high)
        moved = (
            np.isfinite(low)
            & np.isfinite(high)
            & ~np.isclose(np.vstack(cis[key]), np.vstack((low, high)), rtol=FLOAT_TOLERANCE, atol=FLOAT_TOLERANCE).all(
                axis=0
            )
        )
        widened = widened or bool(moved.any())
    if widened:
        notes.append("a bootstrap percentile interval did not reach its estimate; it was widened to it")

    def val(x: float) -> float | None:
        return float(x) if np.isfinite(x) else None

    rows = [
        Standing(
            system=systems[i],
            strength=val(strength[i]),
            strength_ci=_ci(*cis["strength"], i),
            win_rate=val(win_rate[i]),
            win_rate_ci=_ci(*cis["win"], i),
            mean_rank=val(mean_rank[i]),
            mean_rank_ci=_ci(*cis["rank"], i),
            n_comparisons=float(games[i]),
            n_items=int((rank_n[:, i] > 0).sum()),
        )
        for i in range(s)
    ]
    rows.sort(key=lambda r: (-(r.strength if r.strength is not None else -np.inf), str(r.system)))
    return Leaderboard(
        tuple(rows),
        len(items),
        n_raters,
        alpha,
        n_comp == 1,
        notes=tuple(notes),
        n_resamples=n_resamples if len(items) >= 2 else 0,
    )
