"""Small static charts for the analytics pages (pure; matplotlib's Agg canvas, no pyplot, no Django).

Each function returns the image as bytes, PNG (default) or SVG. Figures are built with
``matplotlib.figure.Figure`` and rendered through ``FigureCanvasAgg``, so no global backend is switched and
the functions are safe to call from worker threads. Undefined figures are drawn as a labelled gap, and empty
input gives a chart that says "no data" rather than an error.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Literal

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .leaderboard import Leaderboard
from .results import StatResult

Fmt = Literal["png", "svg"]

#: Labels on these charts are user text (system names, QA types, titles built from them). matplotlib reads
#: ``$...$`` in any text as mathtext: an unbalanced one raises (the page was a 500), a balanced one is drawn as a
#: formula, not as written. The portal draws no formulas, so text is literal in every figure of the process
#: (each Text, tick labels included, reads this rc when it is made). Set once at import rather than with
#: ``rc_context`` around each figure, which swaps the global rc and races between threads.
LITERAL_TEXT = {"text.parse_math": False, "text.usetex": False}
matplotlib.rcParams.update(LITERAL_TEXT)


def _render(fig: Figure, fmt: Fmt) -> bytes:
    if fmt not in ("png", "svg"):
        raise ValueError(f"fmt must be 'png' or 'svg', got {fmt!r}")
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
    return buf.getvalue()


def _no_data(ax, text: str = "no data") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


def _finite(x: object) -> bool:
    return isinstance(x, int | float) and math.isfinite(float(x))


def agreement_bar_chart(
    results: Mapping[str, StatResult], *, title: str = "", ylabel: str = "agreement", fmt: Fmt = "png"
) -> bytes:
    """One bar per group (e.g. QA type) with its 95 % interval as a whisker; undefined groups are labelled."""
    fig = Figure(figsize=(max(4.0, 0.8 * len(results) + 2), 3.2))
    ax = fig.add_subplot()
    if not results:
        _no_data(ax)
        return _render(fig, fmt)
    names = [str(k) for k in results]
    vals = [r.value if r.value is not None else np.nan for r in results.values()]
    x = np.arange(len(names))
    ax.bar(x, np.nan_to_num(vals), color=["#4c72b0" if _finite(v) else "none" for v in vals])
    for i, r in enumerate(results.values()):
        if r.ci is not None:
            ax.errorbar(i, r.value, yerr=[[r.value - r.ci[0]], [r.ci[1] - r.value]], color="k", capsize=3)
        if r.value is None:
            ax.text(i, 0, "undefined", rotation=90, ha="center", va="bottom", fontsize=7, color="0.4")
        else:
            ax.text(i, 0, f"n={r.n_items}", ha="center", va="bottom", fontsize=7, color="w")
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xticks(x, names, rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return _render(fig, fmt)


def rank_vs_metric_scatter(
    human: Sequence[float],
    metric: Sequence[float],
    *,
    labels: Sequence[str] | None = None,
    xlabel: str = "human score (−mean rank)",
    ylabel: str = "metric score",
    title: str = "",
    fmt: Fmt = "png",
) -> bytes:
    """Scatter of each system's (or answer's) human score against its metric score; optional point labels."""
    fig = Figure(figsize=(4.5, 4.0))
    ax = fig.add_subplot()
    h = np.asarray(human, dtype=float)
    m = np.asarray(metric, dtype=float)
    ok = np.isfinite(h) & np.isfinite(m) if h.shape == m.shape else np.zeros(0, bool)
    if not ok.any():
        _no_data(ax)
        return _render(fig, fmt)
    ax.scatter(h[ok], m[ok], s=18, color="#4c72b0")
    if labels is not None:
        for i in np.flatnonzero(ok):
            ax.annotate(str(labels[i]), (h[i], m[i]), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return _render(fig, fmt)


def leaderboard_chart(board: Leaderboard, *, title: str = "Bradley-Terry strength", fmt: Fmt = "png") -> bytes:
    """Systems top to bottom by strength, with 95 % interval bars (log-scale strengths, mean 0)."""
    rows = [s for s in board.standings if s.strength is not None]
    fig = Figure(figsize=(5.0, max(2.0, 0.35 * len(rows) + 1)))
    ax = fig.add_subplot()
    if not rows:
        _no_data(ax, board.undefined_reason or "no data")
        return _render(fig, fmt)
    y = np.arange(len(rows))[::-1]
    for yi, s in zip(y, rows, strict=True):
        if s.strength_ci is not None:
            ax.hlines(yi, s.strength_ci[0], s.strength_ci[1], color="0.4", lw=2)
        ax.plot(s.strength, yi, "o", color="#c44e52")
    ax.set_yticks(y, [str(s.system) for s in rows])
    ax.axvline(0, color="0.7", lw=0.8)
    ax.set_xlabel("strength (log odds vs. average system)")
    ax.set_title(title)
    return _render(fig, fmt)


def score_boxplots(
    scores_by_type: Mapping[str, Sequence[float]], *, ylabel: str = "score", title: str = "", fmt: Fmt = "png"
) -> bytes:
    """Box plot of scores per QA type (non-finite scores dropped; empty types shown as gaps)."""
    fig = Figure(figsize=(max(4.0, 0.8 * len(scores_by_type) + 2), 3.2))
    ax = fig.add_subplot()
    data = [np.asarray(v, dtype=float) for v in scores_by_type.values()]
    data = [d[np.isfinite(d)] for d in data]
    if not any(len(d) for d in data):
        _no_data(ax)
        return _render(fig, fmt)
    ax.boxplot([d if len(d) else [np.nan] for d in data], showfliers=True)
    ax.set_xticks(np.arange(1, len(data) + 1), [str(k) for k in scores_by_type], rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return _render(fig, fmt)
