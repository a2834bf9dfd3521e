"""Inter-rater agreement for vetting data: Krippendorff's alpha, Fleiss' kappa, Cohen's kappa, raw agreement.

Input: a long DataFrame with columns ``item``, ``annotator``, ``value`` (missing values allowed), see
:func:`stats.ratings.prepare_ratings` for how the scale is set. Every function returns a
:class:`~stats.results.StatResult` with a percentile bootstrap 95 % interval from resampling items
(:mod:`stats.bootstrap`).

Common rules: an item counts only if it has at least two ratings ("pairable"). The chance-corrected
coefficients (alpha, Fleiss, Cohen) are undefined with one rater, with fewer than two pairable items, and
when the expected disagreement is zero (every rating has the same value). Raw agreement is a plain
proportion and is reported for a single item too (without an interval).

Alpha is computed here from the coincidence matrix (Krippendorff 2011), not with the GPL-3.0 ``krippendorff``
package, which the tests use as an independent cross-check only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_sums, with_interval
from .ratings import RatingTable, prepare_ratings
from .results import StatResult, finite_or_none, undefined

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
Weights = Literal["linear", "quadratic"] | None


def _table(ratings: pd.DataFrame | RatingTable, values: Sequence | None) -> RatingTable:
    if isinstance(ratings, RatingTable):
        return ratings
    return prepare_ratings(ratings, values=values)


def _pairable(table: RatingTable) -> tuple[np.ndarray, np.ndarray, int]:
    """Counts of pairable items (>= 2 ratings), their indices, and the number of raters on them."""
    counts = table.unit_counts()
    keep = np.flatnonzero(counts.sum(axis=1) >= 2)
    n_raters = len(np.unique(table.rater_idx[np.isin(table.item_idx, keep)]))
    return counts[keep], keep, n_raters


def _degenerate(name: str, table: RatingTable, n_items: int, n_raters: int) -> StatResult | None:
    n_all_raters = len(table.rater_labels)
    if n_all_raters < 2:
        return undefined(name, f"only {n_all_raters} rater(s): agreement needs at least two", n_raters=n_all_raters)
    if n_items == 0:
        return undefined(name, "no item has ratings from two or more raters", n_raters=n_raters)
    if n_items < 2:
        return undefined(
            name,
            "only one item has two or more ratings: chance agreement cannot be estimated from one item",
            n_items=n_items,
            n_raters=n_raters,
        )
    return None


# --------------------------------------------------------------------------------------------- alpha


def _delta2(level: str, n_c: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Squared difference function delta^2_ck of Krippendorff (2011, sec. "Difference functions").

    nominal: 0 if c == k else 1; ordinal: (sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2 with n_g the coincidence
    marginals of the scale points in order; interval: (c - k)^2; ratio: ((c - k) / (c + k))^2.
    ``n_c`` is ``(B, K)``; the result broadcasts to ``(B, K, K)``.
    """
    k = len(positions)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "interval":
        return (positions[:, None] - positions[None, :]) ** 2
    if level == "ratio":
        s = positions[:, None] + positions[None, :]
        d = positions[:, None] - positions[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(s == 0, 0.0, (d / np.where(s == 0, 1.0, s)) ** 2)
    if level == "ordinal":
        cum = np.cumsum(n_c, axis=-1)
        # c <= k: sum_{g=c}^{k} n_g - (n_c+n_k)/2 = cum_k - cum_c + (n_c - n_k)/2; antisymmetric for c > k
        g = cum[..., None, :] - cum[..., :, None] + (n_c[..., :, None] - n_c[..., None, :]) / 2.0
        return g**2
    raise ValueError(f"level must be one of {LEVELS}, got {level!r}")


def alpha_from_coincidences(o: np.ndarray, level: str, positions: np.ndarray) -> np.ndarray:
    """Alpha from coincidence matrices ``o`` of shape ``(B, K, K)`` (NaN where undefined).

    alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_ck o_ck delta^2_ck / sum_ck n_c n_k delta^2_ck
    (Krippendorff 2011, eq. for the general form), with n_c = sum_k o_ck and n = sum_c n_c.
    """
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    d2 = _delta2(level, n_c, positions)
    d_obs = (o * d2).sum(axis=(-2, -1))
    d_exp = (n_c[..., :, None] * n_c[..., None, :] * d2).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n - 1.0) * d_obs / d_exp
    return np.where(d_exp > 0, alpha, np.nan)


def coincidence_contributions(counts: np.ndarray) -> np.ndarray:
    """Per-item coincidence matrices ``(n_items, K, K)`` from per-item value counts ``(n_items, K)``.

    o^u_ck = (n_uc * n_uk - [c == k] * n_uc) / (m_u - 1), m_u = ratings of item u (Krippendorff 2011):
    every ordered pair of values from different raters of a unit, weighted 1/(m_u - 1). Needs m_u >= 2.
    """
    m = counts.sum(axis=1)
    outer = counts[:, :, None] * counts[:, None, :]
    idx = np.arange(counts.shape[1])
    outer[:, idx, idx] -= counts
    return outer / (m - 1.0)[:, None, None]


def krippendorff_alpha(
    ratings: pd.DataFrame | RatingTable,
    *,
    level: Level,
    values: Sequence | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> StatResult:
    """Krippendorff's alpha at the given ``level`` (required: there is no safe default), missing data allowed.

    Source: K. Krippendorff (2011), *Computing Krippendorff's Alpha-Reliability*, Annenberg School for
    Communication Departmental Papers 43. Coincidence matrix o_ck over pairable units, alpha = 1 - D_o/D_e,
    difference functions as in :func:`_delta2`. The ordinal metric depends only on the order of the scale and
    the marginals n_g (unused scale points have n_g = 0 and change nothing). On the paper's 4 observers x
    12 units example this gives nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
    The interval resamples items and recomputes alpha from the summed per-item coincidence matrices.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    name = f"krippendorff_alpha_{level}"
    table = _table(ratings, values)
    if level == "ratio" and not table.numeric_scale:
        raise ValueError("the ratio level needs a numeric scale")
    counts, _, n_raters = _pairable(table)
    bad = _degenerate(name, table, len(counts), n_raters)
    if bad is not None:
        return bad
    k = table.n_categories
    contrib = coincidence_contributions(counts).reshape(len(counts), k * k)

    def stat(sums: np.ndarray) -> np.ndarray:
        return alpha_from_coincidences(sums.reshape(-1, k, k), level, table.positions)

    value = finite_or_none(stat(contrib.sum(axis=0)[None])[0])
    notes = tuple(
        n
        for n in (
            table.order_note() if level in ("ordinal", "interval") else None,
            table.distance_note() if level == "interval" else None,
        )
        if n
    )
    if value is None:
        return undefined(
            name,
            "all pairable ratings have the same value: expected disagreement is zero",
            n_items=len(counts),
            n_raters=n_raters,
            notes=notes,
        )
    res = StatResult(name, value, n_items=len(counts), n_raters=n_raters, notes=notes)
    if n_resamples <= 0:
        return res
    return with_interval(res, bootstrap_sums(contrib, stat, n_resamples=n_resamples, seed=seed, min_distinct=2))


# --------------------------------------------------------------------------------------------- Fleiss


def _modal_raters(m: np.ndarray) -> int:
    """Most frequent number of ratings per item; a tie goes to the larger number (more information)."""
    vals, freq = np.unique(m, return_counts=True)
    best = freq.max()
    return int(vals[freq == best].max())


def fleiss_kappa(
    ratings: pd.DataFrame | RatingTable,
    *,
    values: Sequence | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> StatResult:
    """Fleiss' kappa (Fleiss 1971, *Psychological Bulletin* 76(5):378-382) via statsmodels.

    kappa = (P_bar - P_e) / (1 - P_e), P_i = (sum_j n_ij^2 - m) / (m (m - 1)), P_bar = mean_i P_i,
    p_j = sum_i n_ij / (N m), P_e = sum_j p_j^2. The items x categories table (``aggregate_raters``) needs the
    same number m of ratings per item, so only items with the *modal* number of ratings are used (ties: the
    larger m); a note counts the items left out. Raters need not be the same people across items.
    """
    name = "fleiss_kappa"
    table = _table(ratings, values)
    counts, keep, _ = _pairable(table)
    if len(counts) == 0:
        return _degenerate(name, table, 0, 0) or undefined(name, "no pairable items")
    m_per_item = counts.sum(axis=1)
    m = _modal_raters(m_per_item)
    use = m_per_item == m
    counts, used_items = counts[use], keep[use]
    n_raters = len(np.unique(table.rater_idx[np.isin(table.item_idx, used_items)]))
    notes: tuple[str, ...] = ()
    if (~use).any():
        notes = (
            f"{int((~use).sum())} item(s) without the modal {m} ratings left out "
            "(Fleiss' kappa needs equal ratings per item)",
        )
    bad = _degenerate(name, table, len(counts), n_raters)
    if bad is not None:
        return bad.with_notes(*notes)
    k = table.n_categories
    # aggregate_raters wants an items x raters matrix of category codes; rebuild it from the counts
    codes = np.repeat(np.tile(np.arange(k), len(counts)), counts.astype(np.int64).ravel()).reshape(-1, m)
    agg, _ = aggregate_raters(codes, n_cat=k)
    p_cat = agg.sum(axis=0) / agg.sum()
    if np.isclose((p_cat**2).sum(), 1.0, rtol=0, atol=1e-15):
        return undefined(
            name,
            "all ratings fall in one category: P_e = 1",
            n_items=len(counts),
            n_raters=n_raters,
            notes=notes,
        )
    value = finite_or_none(sm_fleiss_kappa(agg, method="fleiss"))
    res = StatResult(name, value, n_items=len(counts), n_raters=n_raters, notes=notes)
    if n_resamples <= 0 or value is None:
        return res
    p_item = ((counts**2).sum(axis=1) - m) / (m * (m - 1.0))
    contrib = np.column_stack([counts, p_item])

    def stat(sums: np.ndarray) -> np.ndarray:
        cat = sums[:, :k]
        n_items = cat.sum(axis=1) / m
        p_j = cat / (n_items * m)[:, None]
        p_bar = sums[:, k] / n_items
        p_e = (p_j**2).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            kappa = (p_bar - p_e) / (1.0 - p_e)
        return np.where(1.0 - p_e > 1e-15, kappa, np.nan)

    return with_interval(res, bootstrap_sums(contrib, stat, n_resamples=n_resamples, seed=seed, min_distinct=2))


# --------------------------------------------------------------------------------------------- Cohen


def _weight_matrix(k: int, weights: Weights) -> np.ndarray:
    i = np.arange(k)
    if weights is None:
        return 1.0 - np.eye(k)
    if weights == "linear":
        return np.abs(i[:, None] - i[None, :]).astype(float)
    if weights == "quadratic":
        return ((i[:, None] - i[None, :]) ** 2).astype(float)
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def cohen_kappa(
    ratings: pd.DataFrame | RatingTable,
    *,
    weights: Weights = None,
    values: Sequence | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> StatResult:
    """Cohen's kappa (Cohen 1960), optionally weighted (Cohen 1968), via sklearn's ``cohen_kappa_score``.

    kappa = 1 - sum_ij w_ij O_ij / sum_ij w_ij E_ij, E = outer(row marginals, column marginals) / n, with
    w = 1 - I (plain), |i - j| (linear) or (i - j)^2 (quadratic) on the scale *positions* i, j. The full scale
    is always passed as ``labels`` because scikit-learn weights by label index: omitting an unused middle
    point would change the weighted value. Defined for exactly two raters, over the items both rated.
    """
    name = "cohen_kappa" if weights is None else f"cohen_kappa_{weights}"
    table = _table(ratings, values)
    n_all = len(table.rater_labels)
    if n_all != 2:
        return undefined(
            name,
            f"Cohen's kappa needs exactly two raters, found {n_all} (use Fleiss' kappa or Krippendorff's alpha)",
            n_raters=n_all,
        )
    k = table.n_categories
    wide = np.full((len(table.item_labels), 2), -1, dtype=np.int64)
    wide[table.item_idx, table.rater_idx] = table.codes
    both = (wide >= 0).all(axis=1)
    y1, y2 = wide[both, 0], wide[both, 1]
    notes: tuple[str, ...] = ()
    if (~both).any():
        notes = (f"{int((~both).sum())} item(s) rated by only one of the two raters left out",)
    bad = _degenerate(name, table, int(both.sum()), 2)
    if bad is not None:
        return bad.with_notes(*notes)
    w = _weight_matrix(k, weights)
    onehot = np.zeros((len(y1), k * k))
    onehot[np.arange(len(y1)), y1 * k + y2] = 1.0

    def stat(sums: np.ndarray) -> np.ndarray:
        o = sums.reshape(-1, k, k)
        n = o.sum(axis=(1, 2))
        e = o.sum(axis=2)[:, :, None] * o.sum(axis=1)[:, None, :] / n[:, None, None]
        num, den = (w * o).sum(axis=(1, 2)), (w * e).sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            kappa = 1.0 - num / den
        return np.where(den > 1e-12 * n, kappa, np.nan)

    if not np.isfinite(stat(onehot.sum(axis=0)[None])[0]):
        return undefined(
            name,
            "expected disagreement is zero (both raters used a single, identical value)",
            n_items=len(y1),
            n_raters=2,
            notes=notes,
        )
    value = finite_or_none(cohen_kappa_score(y1, y2, labels=list(range(k)), weights=weights))
    res = StatResult(name, value, n_items=len(y1), n_raters=2, notes=notes)
    if n_resamples <= 0 or value is None:
        return res
    return with_interval(res, bootstrap_sums(onehot, stat, n_resamples=n_resamples, seed=seed, min_distinct=2))


# --------------------------------------------------------------------------------------------- raw


def percent_agreement(
    ratings: pd.DataFrame | RatingTable,
    *,
    values: Sequence | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> StatResult:
    """Raw pairwise agreement, a *proportion* in [0, 1] (not chance-corrected).

    For each pairable item u with m_u ratings, P_u = sum_c n_uc (n_uc - 1) / (m_u (m_u - 1)) is the share
    of ordered rater pairs that agree (Fleiss 1971's P_i, allowing unequal m_u); the value is the mean of P_u
    over pairable items, each item weighted equally. Defined for a single item (no interval then).
    """
    name = "percent_agreement"
    table = _table(ratings, values)
    counts, _, n_raters = _pairable(table)
    if len(table.rater_labels) < 2 or len(counts) == 0:
        return _degenerate(name, table, len(counts), n_raters) or undefined(name, "no pairable items")
    m = counts.sum(axis=1)
    p_item = (counts * (counts - 1.0)).sum(axis=1) / (m * (m - 1.0))
    res = StatResult(name, float(p_item.mean()), n_items=len(counts), n_raters=n_raters)
    if n_resamples <= 0:
        return res
    n = len(p_item)
    return with_interval(res, bootstrap_sums(p_item, lambda s: s[:, 0] / n, n_resamples=n_resamples, seed=seed))


def agreement_summary(
    ratings: pd.DataFrame | RatingTable,
    *,
    level: Level,
    values: Sequence | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, StatResult]:
    """All agreement figures for one set of ratings, keyed as in the ``agreement`` command's JSON.

    ``cohen_kappa_quadratic`` is undefined at the nominal level (quadratic weights need an ordered scale).
    """
    table = _table(ratings, values)
    kw = {"n_resamples": n_resamples, "seed": seed}
    out = {
        "krippendorff_alpha": krippendorff_alpha(table, level=level, **kw),
        "fleiss_kappa": fleiss_kappa(table, **kw),
        "cohen_kappa": cohen_kappa(table, **kw),
        "percent_agreement": percent_agreement(table, **kw),
    }
    if level == "nominal":
        out["cohen_kappa_quadratic"] = undefined(
            "cohen_kappa_quadratic", "quadratic weights need an ordered scale; the level is nominal"
        )
    else:
        quad = cohen_kappa(table, weights="quadratic", **kw)
        out["cohen_kappa_quadratic"] = quad.with_notes(table.order_note() or "")
    return out
