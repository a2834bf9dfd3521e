"""A human leaderboard that controls for answer style, as Chatbot Arena's "style control" does (pure).

Physicians, like everyone, may prefer longer or better-formatted answers. Chatbot Arena (LMSYS, "Does style matter?
Disentangling style and substance in Chatbot Arena", 2024) fits the Bradley-Terry model as a logistic regression
and adds style differences as covariates, so a system's strength is what is left once length and markdown are
accounted for:

    logit P(a beats b) = theta_a − theta_b + sum_k beta_k * z_k(a, b)

where for each style feature f (answer length in tokens, markdown headers, list items, bold spans)
z = (f_a − f_b) / (f_a + f_b + 1), scaled to unit root-mean-square over all comparisons. A positive beta_length means that, at equal
strength, the longer answer tends to win. Every ranker's ranking of a question gives one comparison per pair of
systems; a tie gives half a win to each side (two half-weighted rows), as in :mod:`stats.leaderboard`.

The model is fitted by Newton's method with a small ridge penalty ``ridge`` * ||w||² / 2 (the same role as the plain
leaderboard's prior: it keeps strengths finite when a system never lost and makes the one-hot design identifiable);
strengths are centred to mean 0. Intervals resample questions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import sparse

from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, interval_containing, percentile_interval, resample_counts
from .leaderboard import system_rank_frame

STYLE_FEATURES = ("length", "headers", "list_items", "bold")
STYLE_LABELS = {
    "length": "Answer length (tokens)",
    "headers": "Markdown headers",
    "list_items": "List items",
    "bold": "Bold spans",
}
DEFAULT_RIDGE = 0.01

_TOKEN = re.compile(r"[\u3400-\u9fff]|[^\W\d_\u3400-\u9fff]+|\d+")  # words, numbers, and each CJK character
_HEADER = re.compile(r"^\s{0,3}#{1,6}\s+\S", re.MULTILINE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S", re.MULTILINE)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__", re.DOTALL)


def answer_style(text: str) -> dict[str, int]:
    """The style features of one answer: tokens (words, numbers, CJK characters), headers, list items, bold spans."""
    text = text or ""
    return {
        "length": len(_TOKEN.findall(text)),
        "headers": len(_HEADER.findall(text)),
        "list_items": len(_LIST_ITEM.findall(text)),
        "bold": len(_BOLD.findall(text)),
    }


@dataclass(frozen=True)
class Comparisons:
    """Pairwise outcomes: row r says system ``first[r]`` beat ``second[r]`` with weight ``weight[r]``."""

    systems: tuple
    items: tuple
    first: np.ndarray
    second: np.ndarray
    item: np.ndarray
    weight: np.ndarray
    style: np.ndarray  # (rows, features): scaled style differences, first minus second


def comparisons(
    rankings: pd.DataFrame,
    styles: pd.DataFrame | None,
    *,
    exclude: Iterable = (),
    features: tuple[str, ...] = STYLE_FEATURES,
) -> Comparisons:
    """Pairwise outcomes from rankings, with the style difference of each pair (``styles``: item, system, features).

    Each ranker's ranking of a question gives, for each pair of systems, one row "winner beat loser" of weight 1,
    or two rows of weight 0.5 (each way) for a tie.
    """
    frame = system_rank_frame(rankings, exclude)
    systems = tuple(sorted(frame["system"].unique(), key=str))
    items = tuple(sorted(frame["item"].unique(), key=str))
    pairs = frame.merge(frame, on=["item", "annotator"], suffixes=("_a", "_b"))
    pairs = pairs[pairs["system_a"].astype(str) < pairs["system_b"].astype(str)]
    a_wins = pairs[pairs["rank_a"] < pairs["rank_b"]]
    b_wins = pairs[pairs["rank_a"] > pairs["rank_b"]]
    ties = pairs[pairs["rank_a"] == pairs["rank_b"]]
    rows = pd.concat(
        [
            pd.DataFrame({"item": a_wins["item"], "win": a_wins["system_a"], "lose": a_wins["system_b"], "w": 1.0}),
            pd.DataFrame({"item": b_wins["item"], "win": b_wins["system_b"], "lose": b_wins["system_a"], "w": 1.0}),
            pd.DataFrame({"item": ties["item"], "win": ties["system_a"], "lose": ties["system_b"], "w": 0.5}),
            pd.DataFrame({"item": ties["item"], "win": ties["system_b"], "lose": ties["system_a"], "w": 0.5}),
        ],
        ignore_index=True,
    )
    style = np.zeros((len(rows), len(features)))
    if features:
        if styles is None:
            raise ValueError("style features asked for but no styles given")
        missing = [c for c in ("item", "system", *features) if c not in styles.columns]
        if missing:
            raise ValueError(f"styles lack column(s) {missing}")
        table = styles.set_index(["item", "system"])[list(features)].astype(float)
        if table.index.duplicated().any():
            raise ValueError("two style rows for one answer")
        win = table.reindex(pd.MultiIndex.from_arrays([rows["item"], rows["win"]])).to_numpy()
        lose = table.reindex(pd.MultiIndex.from_arrays([rows["item"], rows["lose"]])).to_numpy()
        if np.isnan(win).any() or np.isnan(lose).any():
            raise ValueError("a ranked answer has no style features")
        ratio = (win - lose) / (win + lose + 1.0)
        # scaled to unit root-mean-square, not centred: a pair's orientation is arbitrary (the difference changes
        # sign with it) and the model has no intercept, so centring would read the winners' style as a baseline
        scale = np.sqrt((ratio**2).mean(axis=0))
        style = np.where(scale > 0, ratio / np.where(scale > 0, scale, 1.0), 0.0)
    index = pd.Index(systems)
    return Comparisons(
        systems=systems,
        items=items,
        first=index.get_indexer(rows["win"]),
        second=index.get_indexer(rows["lose"]),
        item=pd.Index(items).get_indexer(rows["item"]),
        weight=rows["w"].to_numpy(dtype=float),
        style=style,
    )


def design_matrix(comps: Comparisons) -> np.ndarray:
    """One row per comparison: +1 for the winner's column, −1 for the loser's, then the style differences.

    The outcome of every row is "the first system won" (y = 1), so the model is fitted on these rows and their
    mirror images (y = 0), which keeps the fit symmetric without an intercept.
    """
    n, s = len(comps.first), len(comps.systems)
    x = np.zeros((n, s + comps.style.shape[1]))
    x[np.arange(n), comps.first] = 1.0
    x[np.arange(n), comps.second] = -1.0
    x[:, s:] = comps.style
    return x


def fit_logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray, *, ridge: float = DEFAULT_RIDGE) -> np.ndarray:
    """Weighted logistic regression without intercept, ridge ``ridge`` * ||w||² / 2, by Newton's method."""
    if ridge <= 0:
        raise ValueError("ridge must be positive (the one-hot design is not identifiable without it)")
    w = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (weight * (p - y)) + ridge * w
        hess = (x * (weight * p * (1 - p))[:, None]).T @ x + ridge * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return w


def fit_binomial_logistic(
    x: np.ndarray, wins: np.ndarray, trials: np.ndarray, *, ridge: float = DEFAULT_RIDGE
) -> np.ndarray:
    """:func:`fit_logistic` on binomial rows: row ``r`` stands for ``trials[r]`` weighted outcomes with design
    ``x[r]``, ``wins[r]`` of them y = 1. The same penalised likelihood and Newton steps as expanding every row."""
    if ridge <= 0:
        raise ValueError("ridge must be positive (the one-hot design is not identifiable without it)")
    w = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (trials * p - wins) + ridge * w
        hess = (x * (trials * p * (1 - p))[:, None]).T @ x + ridge * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return w


@dataclass(frozen=True)
class StyleControlled:
    systems: tuple
    strengths: np.ndarray  # centred, per system
    strength_ci: np.ndarray  # (systems, 2); NaN without resamples
    features: tuple[str, ...]
    coefficients: np.ndarray
    coefficient_ci: np.ndarray  # (features, 2)
    n_comparisons: float
    n_items: int

    def coefficient_table(self) -> Mapping[str, tuple[float, float, float]]:
        return {
            f: (float(c), float(lo), float(hi))
            for f, c, (lo, hi) in zip(self.features, self.coefficients, self.coefficient_ci, strict=True)
        }


@dataclass(frozen=True)
class _Grouped:
    """The comparisons as binomial rows: one row per distinct design row ``x`` (an unordered pair of systems and
    its style difference), with the weight of "the first won" and of "the second won" per question.

    The model's likelihood: each comparison's row (y = 1) and its mirror ``−x`` (y = 0), both at half weight (no
    intercept, no arbitrary orientation of the pair), with :func:`fit_logistic`. These give
    the gradient ``x (w p − w)`` and Hessian ``w p (1 − p) x xᵀ`` per row; a row ``−x`` with weight ``w`` is the
    row ``x`` with the outcome reversed, so all comparisons sharing a design row add up to one binomial row with
    ``n = wins + losses`` trials and ``wins`` successes: gradient ``x (n p − wins)``, Hessian ``n p (1 − p) x xᵀ``.
    The same fit with far fewer rows (without style covariates, one row per pair of systems for the whole study).
    """

    n_systems: int
    x: np.ndarray  # (groups, systems + features)
    wins: sparse.csr_matrix  # (items, groups)
    trials: sparse.csr_matrix  # (items, groups)

    @classmethod
    def of(cls, comps: Comparisons) -> _Grouped:
        s = len(comps.systems)
        flip = comps.first > comps.second
        low = np.where(flip, comps.second, comps.first)
        high = np.where(flip, comps.first, comps.second)
        style = np.where(flip[:, None], -comps.style, comps.style)
        key = np.column_stack([low, high, style]) if len(low) else np.zeros((0, 2 + style.shape[1]))
        unique, group = np.unique(key, axis=0, return_inverse=True)
        group = np.asarray(group).ravel()
        x = np.zeros((len(unique), s + style.shape[1]))
        rows = np.arange(len(unique))
        x[rows, unique[:, 0].astype(int)] = 1.0
        x[rows, unique[:, 1].astype(int)] = -1.0
        x[:, s:] = unique[:, 2:]
        shape = (len(comps.items), len(unique))
        wins = sparse.csr_matrix((np.where(flip, 0.0, comps.weight), (comps.item, group)), shape=shape)
        trials = sparse.csr_matrix((comps.weight, (comps.item, group)), shape=shape)
        return cls(s, x, wins, trials)


def _fit_grouped(grouped: _Grouped, item_weight: np.ndarray, ridge: float) -> np.ndarray:
    """Centred strengths and style coefficients with each question weighted by ``item_weight`` (a resample's counts)."""
    wins = grouped.wins.T @ item_weight
    trials = grouped.trials.T @ item_weight
    used = trials > 0
    coef = fit_binomial_logistic(grouped.x[used], wins[used], trials[used], ridge=ridge)
    s = grouped.n_systems
    coef[:s] -= coef[:s].mean()
    return coef


def style_controlled_leaderboard(
    rankings: pd.DataFrame,
    styles: pd.DataFrame | None,
    *,
    exclude: Iterable = (),
    features: tuple[str, ...] = STYLE_FEATURES,
    ridge: float = DEFAULT_RIDGE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> StyleControlled:
    """Bradley-Terry strengths with style covariates (``features=()`` gives the plain logistic Bradley-Terry)."""
    comps = comparisons(rankings, styles, exclude=exclude, features=features)
    return leaderboard_of(comps, features, ridge=ridge, n_resamples=n_resamples, seed=seed)


def without_style(comps: Comparisons) -> Comparisons:
    """The same comparisons with no style column: what ``features=()`` gives, without reading the rankings again."""
    return replace(comps, style=comps.style[:, :0])


def leaderboard_of(
    comps: Comparisons,
    features: tuple[str, ...],
    *,
    ridge: float = DEFAULT_RIDGE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> StyleControlled:
    """The fit of :func:`style_controlled_leaderboard` on comparisons already made (``features``: the names of
    their style columns), with intervals from ``n_resamples`` resamples of the items (none at 0)."""
    if len(comps.systems) < 2 or len(comps.first) == 0:
        raise ValueError("a leaderboard needs rankings of at least two systems")
    # a feature that never differs between two compared answers (no answer has a header, say) has no effect to
    # estimate: it is left out of the fit and reported as undefined (NaN), not as a confident 0
    varies = np.abs(comps.style).sum(axis=0) > 0
    fitted = replace(comps, style=comps.style[:, varies])
    grouped = _Grouped.of(fitted)
    coef = _fit_grouped(grouped, np.ones(len(comps.items)), ridge)
    s = len(comps.systems)
    ci = np.full((len(coef), 2), np.nan)
    if n_resamples > 0 and len(comps.items) > 1:
        counts = resample_counts(len(comps.items), n_resamples, seed)
        draws = np.stack([_fit_grouped(grouped, row, ridge) for row in counts])
        ci = np.column_stack(interval_containing(coef, *percentile_interval(draws)))
    coefficients = np.full(len(features), np.nan)
    coefficient_ci = np.full((len(features), 2), np.nan)
    coefficients[varies] = coef[s:]
    coefficient_ci[varies] = ci[s:]
    return StyleControlled(
        systems=comps.systems,
        strengths=coef[:s],
        strength_ci=ci[:s],
        features=tuple(features),
        coefficients=coefficients,
        coefficient_ci=coefficient_ci,
        n_comparisons=float(comps.weight.sum()),
        n_items=len(comps.items),
    )
