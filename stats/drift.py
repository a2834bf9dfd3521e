"""A labeller's accuracy over time, and when it has dropped (pure).

Each label carries its chance of being right under the fitted model (the posterior of the label given). The
share right is read over consecutive windows of a fixed number of labels, each with a 95 % Jeffreys interval; a
**drift** is a latest full window whose whole interval lies below the share right over every label before it: a
drop larger than the window's own uncertainty, not a bad afternoon read off five labels.
"""

from __future__ import annotations

import numpy as np

from .dawid_skene import jeffreys_interval


def accuracy_windows(right: np.ndarray, size: int) -> list[dict]:
    """``right`` (oldest first) cut into windows of ``size`` labels (the last may be shorter): each
    ``{"start", "end", "n", "accuracy", "low", "high"}``, positions counted from 1."""
    right = np.asarray(right, dtype=float)
    starts = np.arange(0, len(right), size)
    sums = np.add.reduceat(right, starts) if len(right) else np.zeros(0)
    counts = np.minimum(size, len(right) - starts).astype(float)
    lows, highs = jeffreys_interval(sums, counts)
    return [
        {
            "start": int(s) + 1,
            "end": int(s + n),
            "n": int(n),
            "accuracy": float(x / n),
            "low": float(lo),
            "high": float(hi),
        }
        for s, n, x, lo, hi in zip(starts, counts, sums, lows, highs, strict=True)
    ]


def drifted(right: np.ndarray, size: int) -> bool:
    """Whether the latest ``size`` labels' interval lies wholly below the share right over all the labels before
    them (which must be at least ``size`` too: a drift is against a record, not against nothing)."""
    right = np.asarray(right, dtype=float)
    if size < 1 or len(right) < 2 * size:
        return False
    low, high = jeffreys_interval(np.asarray([right[-size:].sum()]), np.asarray([float(size)]))
    return bool(high[0] < right[:-size].mean())
