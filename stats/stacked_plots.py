"""Stacked horizontal bars for shares that add up to one (e.g. the kinds of hallucination per system), drawn like
:mod:`stats.plots`' charts (pure; matplotlib's Agg canvas). Each part has a colour and a hatch of its own and a
legend in words, so the chart reads in grey print too; each part's percentage is written in it when it is wide
enough."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from . import fonts
from .plots import Fmt, _finish, _no_data, _with_n

#: Colour-blind-safe (Okabe-Ito) colours and hatches for the parts, in order.
PART_STYLES = (("#0072B2", ""), ("#E69F00", "//"), ("#999999", ".."), ("#009E73", "xx"), ("#CC79A7", "\\\\"))


@dataclass(frozen=True)
class StackedBar:
    label: str
    shares: tuple[float, ...]
    n: int | None = None


@dataclass(frozen=True)
class StackedBarChart:
    title: str
    xlabel: str
    parts: tuple[str, ...]
    bars: tuple[StackedBar, ...]
    n_unit: str = "items"
    caption: str = ""
    width: float = 7.0


def draw_stacked(chart: StackedBarChart, fmt: Fmt = "png") -> bytes:
    """The chart as PNG or SVG bytes; a bar whose shares are all zero is left empty and says so."""
    fonts.use_fonts()
    rows = chart.bars
    fig = Figure(figsize=(chart.width, 0.5 * max(len(rows), 1) + 2.2))
    ax = fig.add_subplot()
    if not rows:
        _no_data(ax)
        return _finish(fig, ax, chart.title, chart.caption, fmt)
    y = np.arange(len(rows))[::-1]
    for yi, bar in zip(y, rows, strict=True):
        if not any(bar.shares):
            ax.text(0.01, yi, "nothing marked", va="center", fontsize=8, color="0.45", style="italic")
            continue
        left = 0.0
        for index, share in enumerate(bar.shares):
            color, hatch = PART_STYLES[index % len(PART_STYLES)]
            ax.barh(yi, share, left=left, height=0.6, color=color, hatch=hatch, edgecolor="white", lw=0.5)
            if share >= 0.12:
                ax.text(
                    left + share / 2,
                    yi,
                    f"{100 * share:.0f} %",
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="white" if index == 0 else "black",
                )
            left += share
    ax.set_yticks(y, [_with_n(b.label, b.n, chart.n_unit) for b in rows])
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlim(0, 1)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1], ["0 %", "25 %", "50 %", "75 %", "100 %"])
    ax.set_xlabel(chart.xlabel)
    handles = [
        ax.bar(0, 0, color=PART_STYLES[i % len(PART_STYLES)][0], hatch=PART_STYLES[i % len(PART_STYLES)][1])
        for i in range(len(chart.parts))
    ]
    ax.legend(handles, chart.parts, loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=1, fontsize=9, frameon=False)
    return _finish(fig, ax, chart.title, chart.caption, fmt)
