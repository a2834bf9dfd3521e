"""The physicians' rankings and a metric's scores on one grid (pure): the (question, system) cells.

Every correlation of :mod:`stats.correlation` and every judge figure of :mod:`stats.judges` reads the rankings as
cells: per question and system, the physicians' mean rank (the consensus) and the metric's score. The rankings' side
is made once (:func:`ranked_cells`) and shared by every metric set against the same rankings; each score set is
then looked up on it (:func:`ranked_cell_scores`) and joined (:func:`joined_on_cells`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from .leaderboard import system_rank_frame


def validate_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """Check ``item, system, score`` (numeric, finite, one score per item and system); returns a copy."""
    missing = [c for c in ("item", "system", "score") if c not in scores.columns]
    if missing:
        raise ValueError(f"scores lack column(s) {missing}; have {list(scores.columns)}")
    out = scores.loc[:, ["item", "system", "score"]].copy()
    num = pd.to_numeric(out["score"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(num)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise ValueError(f"score {scores['score'].iloc[pos]!r} at row {pos} is not a finite number")
    out["score"] = num
    dup = out.duplicated(["item", "system"])
    if dup.any():
        row = out[dup].iloc[0]
        raise ValueError(f"two scores for system {row['system']!r} on item {row['item']!r}")
    return out


@dataclass(frozen=True, eq=False)  # holds frames: compared and hashed by identity
class RankedCells:
    """The rankings' side of every correlation: the validated rows with the excluded systems dropped and the
    rest re-ranked (``frame``), each (item, system) cell's ``rank_sum``, ``n_rankers`` and ``mean_rank`` (the
    physicians' consensus) sorted by item and system (``cells``), and the cell of each row (``cell_of_row``, a row
    number of ``cells``)."""

    frame: pd.DataFrame
    cells: pd.DataFrame
    cell_of_row: np.ndarray
    exclude: frozenset


Rankings = pd.DataFrame | RankedCells


def ranked_cells(rankings: Rankings, exclude: Iterable = ()) -> RankedCells:
    """The rankings' side of the correlations, made once for every metric set against the same rankings.
    Given a :class:`RankedCells`, returns it; excluding a system it kept is refused (systems are dropped before
    the re-ranking, so that needs the rankings themselves)."""
    exclude = frozenset(exclude)
    if isinstance(rankings, RankedCells):
        if exclude - rankings.exclude:
            raise ValueError(f"exclude {sorted(exclude - rankings.exclude, key=str)} when the cells are made")
        return rankings
    frame = system_rank_frame(rankings, exclude)
    grouped = frame.groupby(["item", "system"], sort=True)
    cells = grouped["rank"].agg(rank_sum="sum", n_rankers="size").reset_index()
    cells["mean_rank"] = cells["rank_sum"] / cells["n_rankers"]
    return RankedCells(frame, cells, grouped.ngroup().to_numpy(), exclude)


Joined = tuple[pd.DataFrame, pd.DataFrame, tuple[str, ...]]


def joined_cells(rankings: Rankings, scores: pd.DataFrame, exclude: Iterable = ()) -> Joined:
    """Per (item, system): ``rank_sum``, ``n_rankers``, ``mean_rank``, ``score``; plus the used rank rows."""
    ranked = ranked_cells(rankings, exclude)
    return joined_on_cells(ranked, ranked_cell_scores(ranked, scores))


def joined_on_cells(ranked: RankedCells, on_cells: CellScores) -> Joined:
    scored = ~np.isnan(on_cells.score)
    notes = []
    no_score = int((~scored).sum())
    if no_score:
        notes.append(f"{no_score} ranked (item, system) cell(s) without a score left out")
    if on_cells.unranked:
        notes.append(f"{on_cells.unranked} scored (item, system) cell(s) without a ranking left out")
    named_reference = (ranked.cells["system"] == "reference").any() or (on_cells.systems == "reference").any()
    if named_reference and "reference" not in ranked.exclude:
        notes.append("a system named 'reference' is included; exclude it to leave the reference answer out")
    cells = ranked.cells[scored].reset_index(drop=True)
    cells["score"] = on_cells.score[scored]
    used = ranked.frame[np.isin(ranked.cell_of_row, np.flatnonzero(scored))]
    return cells, used, tuple(notes)


class CellScores(NamedTuple):
    """One score set on the ranked cells: each cell's score (NaN where it has none), how many scores fell on no
    ranked cell, and the scored systems (the excluded ones dropped)."""

    score: np.ndarray
    unranked: int
    systems: pd.Series


def scores_on_cells(rankings: Rankings, scores: pd.DataFrame, exclude: Iterable = ()) -> np.ndarray:
    """Each ranked cell's score (a row of :func:`ranked_cells`' ``cells``), NaN where the scores have none."""
    return ranked_cell_scores(ranked_cells(rankings, exclude), scores).score


def ranked_cell_scores(ranked: RankedCells, scores: pd.DataFrame) -> CellScores:
    sc = validate_scores(scores)
    sc = sc[~sc["system"].isin(ranked.exclude)]
    # each score's cell, looked up in the sorted cells (one hash per score; no outer join and sort per metric)
    if len(ranked.cells) and len(sc):
        cell_index = pd.MultiIndex.from_frame(ranked.cells[["item", "system"]])
        at = cell_index.get_indexer(pd.MultiIndex.from_frame(sc[["item", "system"]]))
    else:
        at = np.full(len(sc), -1)
    found = at >= 0
    score_of_cell = np.full(len(ranked.cells), np.nan)
    score_of_cell[at[found]] = sc["score"].to_numpy(dtype=float)[found]  # finite: validate_scores refused the rest
    return CellScores(score_of_cell, int((~found).sum()), sc["system"])


def pair_rows(cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of cells of the same question: the rows of the first and the second system, the first being the one
    whose name sorts first; in the cells' order of the first, then of the second. Joined on integers: a large study
    asks for these pairs once per judge."""
    systems = sorted(pd.unique(cells["system"]), key=str)
    keys = pd.DataFrame(
        {
            "q": pd.factorize(cells["item"])[0],
            "order": pd.Index(systems).get_indexer(cells["system"]),
            "row": np.arange(len(cells)),
        }
    )
    p = keys.merge(keys, on="q", suffixes=("_a", "_b"))
    p = p[p["order_a"] < p["order_b"]]
    return p["row_a"].to_numpy(), p["row_b"].to_numpy()


@dataclass(frozen=True, eq=False)  # holds arrays: compared and hashed by identity
class CellPairs:
    """Every pair of systems within a question over the cells of a :class:`RankedCells`, for setting several score
    sets against the same rankings without joining each: the two cells' rows (``a``, ``b``, as
    :func:`within_question_pairs` orders them), the question (``question``: the position of the pair's item among
    the cells' sorted items) and the physicians' order on mean rank (``human``: +1 when they put the first system
    higher, −1 lower, 0 tied). Restricted to the cells a score set scores, these are its within-question pairs."""

    a: np.ndarray
    b: np.ndarray
    question: np.ndarray
    human: np.ndarray


def cell_pairs(ranked: RankedCells) -> CellPairs:
    """The within-question pairs of every ranked cell (see :class:`CellPairs`)."""
    cells = ranked.cells
    a, b = pair_rows(cells)
    mean_rank = cells["mean_rank"].to_numpy(float)
    question = pd.factorize(cells["item"])[0]  # the cells are sorted by item: codes in sorted order
    return CellPairs(a, b, question[a], np.sign(mean_rank[b] - mean_rank[a]))
