"""Result objects shared by the statistics modules (pure Python, no Django).

Every statistic returns a :class:`StatResult`: the value (``None`` when undefined), an optional percentile
bootstrap 95 % interval, how many items and raters were actually used, and ``undefined_reason`` saying why a
value is missing. Nothing is ever replaced by a made-up number (no 0, no NaN in ``value``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class StatResult:
    """One statistic, honest about uncertainty and about what is undefined.

    ``ci_low``/``ci_high`` are a percentile bootstrap interval (resampling items or questions, see
    :mod:`stats.bootstrap`); they are ``None`` when the value is undefined, when fewer than two
    items were used, or when no bootstrap was asked for. ``n_resamples_defined`` counts the resamples in
    which the statistic was defined; the interval is taken over those only (a note says so when some were
    not).
    """

    name: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n_items: int = 0
    n_raters: int = 0
    undefined_reason: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    n_resamples: int = 0
    n_resamples_defined: int = 0
    n_systems: int | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None

    @property
    def ci(self) -> tuple[float, float] | None:
        if self.ci_low is None or self.ci_high is None:
            return None
        return (self.ci_low, self.ci_high)

    def with_notes(self, *notes: str) -> StatResult:
        return replace(self, notes=self.notes + tuple(n for n in notes if n))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, name: str = "") -> StatResult:
        """The inverse of :meth:`to_dict` for a stored result: every field kept (counts included), unknown keys
        ignored; ``None`` gives an undefined result."""
        data = dict(data or {})
        known = {f for f in cls.__dataclass_fields__ if f in data}
        kwargs = {key: data[key] for key in known}
        kwargs.setdefault("name", name)
        kwargs.setdefault("value", None)
        kwargs["notes"] = tuple(kwargs.get("notes") or ())
        for count in ("n_items", "n_raters", "n_resamples", "n_resamples_defined"):
            kwargs[count] = kwargs.get(count) or 0
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["notes"] = list(self.notes)
        return out


def undefined(
    name: str,
    reason: str,
    *,
    n_items: int = 0,
    n_raters: int = 0,
    notes: tuple[str, ...] = (),
    n_systems: int | None = None,
) -> StatResult:
    """A result whose value is undefined, with the reason."""
    return StatResult(
        name=name,
        value=None,
        n_items=n_items,
        n_raters=n_raters,
        undefined_reason=reason,
        notes=tuple(notes),
        n_systems=n_systems,
    )


#: Two figures that agree to within one part in a million are one figure. Float arithmetic leaves noise in the last
#: bits (a mean summed in another order; a Bradley-Terry fit that stops within choix's step tolerance of 1e-8 lands
#: ~1e-9 beside the same fit from another start), and the reports read figures at two or three decimals: a gap this
#: small is no difference, a tie is a tie and an interval this narrow has no width.
FLOAT_TOLERANCE = 1e-6


def same_value(a: float, b: float) -> bool:
    """Whether two figures are the same up to float noise (:data:`FLOAT_TOLERANCE`, relative and absolute)."""
    return math.isclose(a, b, rel_tol=FLOAT_TOLERANCE, abs_tol=FLOAT_TOLERANCE)


def intervals_overlap(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """Whether two intervals share a point; an interval that is missing cannot tell anything apart (True)."""
    if a is None or b is None:
        return True
    return a[0] <= b[1] + FLOAT_TOLERANCE and b[0] <= a[1] + FLOAT_TOLERANCE


def tied_with_best(figures: Mapping[Hashable, tuple[float, tuple[float, float] | None]]) -> list[Hashable]:
    """The keys whose figure cannot be told apart from the highest one, the highest first (then in the given
    order): ``figures`` maps a key to its value and 95 % interval. A figure ties the best when it is the same value
    up to float noise (:func:`same_value`) or when the two intervals overlap (:func:`intervals_overlap`); a figure
    without an interval counts as the point it is, and two without one cannot be told apart.

    Overlapping intervals are a cautious test (two figures whose intervals overlap a little can still differ),
    and that is the side a headline should err on: it names one winner only when nothing else comes close.
    Empty for no figures."""
    if not figures:
        return []
    best = max(figures, key=lambda key: figures[key][0])
    value, ci = figures[best]
    return [best] + [
        key
        for key, (other, other_ci) in figures.items()
        if key != best and (same_value(other, value) or _overlap_or_unknown(other, other_ci, value, ci))
    ]


def _overlap_or_unknown(a: float, a_ci, b: float, b_ci) -> bool:
    if a_ci is None and b_ci is None:
        return True
    return intervals_overlap(a_ci or (a, a), b_ci or (b, b))


def finite_or_none(x: float) -> float | None:
    """``float(x)`` when finite, else ``None`` (never let NaN or inf leak into a result)."""
    x = float(x)
    return x if math.isfinite(x) else None


def per_group(
    df: pd.DataFrame, group_col: str, fn: Callable[..., StatResult], /, **kwargs: Any
) -> dict[Hashable, StatResult]:
    """Apply a statistic to each group of ``df`` (e.g. per QA type): ``{group: fn(group_df, **kwargs)}``.

    Groups are taken in sorted order; the same seed is used in every group, so each group's bootstrap is
    reproducible on its own.
    """
    return {key: fn(sub, **kwargs) for key, sub in df.groupby(group_col, sort=True)}


def results_to_frame(results: Mapping[Hashable, StatResult]) -> pd.DataFrame:
    """A tidy table (one row per group) of results, e.g. for display or export."""
    rows = []
    for key, res in results.items():
        row = res.to_dict()
        row["group"] = key
        rows.append(row)
    return pd.DataFrame(rows).set_index("group") if rows else pd.DataFrame()
