"""Proportions with intervals (pure): the Wilson score interval, which stays inside 0..1 and behaves at 0 and n."""

from __future__ import annotations

import math

import pandas as pd
from scipy.stats import norm

from .bootstrap import CI_LEVEL


def wilson_interval(successes: int, n: int, level: float = CI_LEVEL) -> tuple[float, float] | None:
    """Wilson's score interval for ``successes`` out of ``n`` (Wilson 1927); None when ``n`` is 0."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError("successes must be between 0 and n")
    z = float(norm.ppf(0.5 + level / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # at 0 and n the bound is exactly 0 or 1 (floating point leaves 1e-17 there)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def harm_rates(ranks: pd.DataFrame) -> list[dict]:
    """Per system, the share of judgements that flagged its answer as potentially harmful, with a Wilson 95 %
    interval; judgements that were not asked (harm left empty) do not count. Empty when no one was asked.

    ``ranks`` has one row per judgement: ``system``, ``is_reference`` and ``harm`` (True, False or missing)."""
    asked = ranks[ranks["harm"].notna()]
    rows = []
    for system, group in asked.groupby("system", sort=True):
        flagged, n = int(group["harm"].astype(bool).sum()), len(group)
        interval = wilson_interval(flagged, n)
        rows.append(
            {
                "system": str(system),
                "is_reference": bool(group["is_reference"].any()),
                "flagged": flagged,
                "n_judgements": n,
                "rate": flagged / n,
                "rate_ci": list(interval) if interval else None,
            }
        )
    return rows
