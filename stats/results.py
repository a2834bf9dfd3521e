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
