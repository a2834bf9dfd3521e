"""Turn long-format ratings (item, annotator, value) into coded arrays on an ordered scale (pure).

The scale decides both the *order* (for ordinal statistics and weighted kappa) and the *distances* (interval
and ratio levels):

* ``values`` given: that ordered list is the full scale, unused points included (they matter for the
  index-based weights of Cohen's weighted kappa and for interval distances on string scales). A rating
  outside the scale is an error.
* ``values`` omitted: the observed values; numbers sort numerically, anything else as strings
  lexicographically (a note says so, since e.g. ``bad < good < okay`` is rarely the intended order).

Interval and ratio distances use the numeric value of each scale point when the scale is numeric, else its
position ``0 .. K-1`` on the scale (a note says so).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class RatingTable:
    """Ratings coded on a scale. Arrays are parallel, one entry per non-missing rating."""

    scale: tuple
    positions: np.ndarray  # numeric value (or index) of each scale point, for interval/ratio distances
    numeric_scale: bool
    scale_given: bool
    item_labels: np.ndarray
    rater_labels: np.ndarray
    item_idx: np.ndarray
    rater_idx: np.ndarray
    codes: np.ndarray
    n_missing: int

    @property
    def n_categories(self) -> int:
        return len(self.scale)

    def unit_counts(self) -> np.ndarray:
        """``(n_items, K)`` matrix: how many ratings of each scale point each item received."""
        k = self.n_categories
        flat = np.bincount(self.item_idx * k + self.codes, minlength=len(self.item_labels) * k)
        return flat.reshape(len(self.item_labels), k).astype(np.float64)

    def order_note(self) -> str | None:
        if self.scale_given or self.numeric_scale:
            return None
        return (
            "no --values scale given: string values ordered lexicographically ("
            + " < ".join(map(str, self.scale))
            + ")"
        )

    def distance_note(self) -> str | None:
        if self.numeric_scale:
            return None
        return "interval distances use scale positions 0..K-1 of the string scale"


def _is_number(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _missing_mask(col: pd.Series) -> np.ndarray:
    as_str = col.astype("string").str.strip()
    return (col.isna() | as_str.isna() | (as_str == "")).to_numpy(dtype=bool)


def _factorize_sorted(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The items coded in sorted order. The bootstrap draws items by position, so with items in the order the rows
    came (a query without ORDER BY) the same ratings could give another interval, and a stored figure (a release
    card's agreement) would not match its recomputation. Items of mixed, unorderable types keep first appearance."""
    try:
        return pd.factorize(column, sort=True)
    except TypeError:
        return pd.factorize(column, sort=False)


def prepare_ratings(
    ratings: pd.DataFrame,
    *,
    values: Sequence | None = None,
    item_col: str = "item",
    rater_col: str = "annotator",
    value_col: str = "value",
) -> RatingTable:
    """Code a long DataFrame of ratings. Missing values (NaN, None, empty string) are dropped.

    Raises ``ValueError`` for a missing column, a duplicate (item, annotator) rating, or, with ``values``,
    a rating that is not on the scale.
    """
    missing_cols = [c for c in (item_col, rater_col, value_col) if c not in ratings.columns]
    if missing_cols:
        raise ValueError(f"ratings lack column(s) {missing_cols}; have {list(ratings.columns)}")
    miss = _missing_mask(ratings[value_col])
    df = ratings.loc[~miss, [item_col, rater_col, value_col]]
    dup = df.duplicated([item_col, rater_col], keep="first")
    if dup.any():
        row = df[dup].iloc[0]
        raise ValueError(f"duplicate rating for item {row[item_col]!r} by annotator {row[rater_col]!r}")
    raw = df[value_col].to_numpy(dtype=object)

    if values is not None:
        scale = tuple(values)
        if len(set(scale)) != len(scale):
            raise ValueError(f"the scale {list(scale)} repeats a value")
        lookup = {v: i for i, v in enumerate(scale)}
        codes = np.fromiter((lookup.get(v, -1) for v in raw), dtype=np.int64, count=len(raw))
        if (codes < 0).any():
            bad = sorted({str(v) for v, c in zip(raw, codes, strict=True) if c < 0})
            raise ValueError(f"value(s) {bad} are not on the scale {list(scale)}")
        numeric = all(_is_number(v) for v in scale)
    else:
        uniq = list(pd.unique(raw))
        numeric = all(_is_number(v) for v in uniq)
        if numeric:
            scale = tuple(sorted(uniq, key=float))
            lookup = {v: i for i, v in enumerate(scale)}
            codes = np.fromiter((lookup[v] for v in raw), dtype=np.int64, count=len(raw))
        else:
            as_str = np.array([str(v) for v in raw], dtype=object)
            scale = tuple(sorted(set(as_str)))
            lookup = {v: i for i, v in enumerate(scale)}
            codes = np.fromiter((lookup[v] for v in as_str), dtype=np.int64, count=len(raw))

    positions = np.array([float(v) for v in scale]) if numeric else np.arange(len(scale), dtype=np.float64)
    item_idx, item_labels = _factorize_sorted(df[item_col])
    rater_idx, rater_labels = pd.factorize(df[rater_col], sort=True)
    return RatingTable(
        scale=scale,
        positions=positions,
        numeric_scale=numeric,
        scale_given=values is not None,
        item_labels=np.asarray(item_labels, dtype=object),
        rater_labels=np.asarray(rater_labels, dtype=object),
        item_idx=item_idx.astype(np.int64),
        rater_idx=rater_idx.astype(np.int64),
        codes=codes,
        n_missing=int(miss.sum()),
    )
