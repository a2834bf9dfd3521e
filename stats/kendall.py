"""Kendall's tau-b for many short rankings at once (pure; numpy).

The study reports compute tau-b per question (seven systems, three rankers) tens of thousands of times; calling
``scipy.stats.kendalltau`` per question cost more than every other statistic together. This computes the same
numbers for a whole stack of equal-length rows: tau_b = (n_c − n_d) / sqrt(n_0 − n_1) / sqrt(n_0 − n_2)
(Kendall 1945), with n_0 = n (n − 1) / 2 pairs and n_1, n_2 the pairs tied in x and in y, in the same integer
counts and the same floating-point operations as scipy's implementation, so the values are identical. Tau-c
(Stuart 1953), which the judges' meta-evaluation reports beside it, the same way: tau_c = 2 (n_c − n_d) / (n² (m − 1)
/ m) with m the smaller number of distinct values of x and of y.
"""

from __future__ import annotations

import numpy as np


def tau_b_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between ``x[q]`` and ``y[q]`` for every row ``q`` of two ``(Q, n)`` arrays; NaN where
    either row is all tied (or ``n < 2``), as ``scipy.stats.kendalltau(x[q], y[q], variant="b")`` gives."""
    return _tau_rows(x, y, "b")


def tau_c_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-c between ``x[q]`` and ``y[q]`` for every row ``q`` of two ``(Q, n)`` arrays; NaN where
    either row is all tied (or ``n < 2``), as ``scipy.stats.kendalltau(x[q], y[q], variant="c")`` gives."""
    return _tau_rows(x, y, "c")


def _tau_rows(x: np.ndarray, y: np.ndarray, variant: str) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    q, n = x.shape
    out = np.full(q, np.nan)
    if n < 2 or q == 0:
        return out
    i, j = np.triu_indices(n, k=1)
    dx = np.sign(x[:, i] - x[:, j]).astype(np.int64)
    dy = np.sign(y[:, i] - y[:, j]).astype(np.int64)
    concordant_minus_discordant = (dx * dy).sum(axis=1)
    total = n * (n - 1) // 2
    x_untied = total - (dx == 0).sum(axis=1)
    y_untied = total - (dy == 0).sum(axis=1)
    ok = (x_untied > 0) & (y_untied > 0)
    if variant == "b":
        tau = concordant_minus_discordant[ok] / np.sqrt(x_untied[ok]) / np.sqrt(y_untied[ok])
    else:  # m: the smaller number of distinct values in the row of x and of y
        m = np.minimum(_distinct(x), _distinct(y))[ok]
        tau = 2 * concordant_minus_discordant[ok] / (n**2 * (m - 1) / m)
    out[ok] = np.minimum(1.0, np.maximum(-1.0, tau))
    return out


def _distinct(x: np.ndarray) -> np.ndarray:
    """The number of distinct values in each row."""
    return 1 + (np.diff(np.sort(x, axis=1), axis=1) != 0).sum(axis=1)
