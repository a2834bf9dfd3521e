"""Small static charts for the analytics pages (pure; matplotlib's Agg canvas, no pyplot, no Django).

A chart is described first as plain data (:class:`BarChart`, :class:`ScatterChart`, :class:`DistributionChart`:
labels, values, intervals, n per group, why a value is undefined), then drawn by :func:`draw` as PNG or SVG
bytes. Pages build the description (``analytics.presentation.charts``) and tests check it, not pixels.

Figures are built with ``matplotlib.figure.Figure`` and rendered through ``FigureCanvasAgg``, so no global
backend is switched and the functions are safe to call from worker threads. Undefined values are drawn as a
labelled gap that says why, and empty input gives a chart that says "no data" rather than an error. Chinese
text is drawn with a CJK font (:mod:`stats.fonts`).
"""

from __future__ import annotations

import io
import math
import textwrap
from dataclasses import dataclass, field
from typing import Literal

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from . import fonts
from .results import StatResult

Fmt = Literal["png", "svg"]

#: Labels on these charts are user text (system names, QA types, titles built from them). matplotlib reads
#: ``$...$`` in any text as mathtext: an unbalanced one raises (the page was a 500), a balanced one is drawn as a
#: formula, not as written. The portal draws no formulas, so text is literal in every figure of the process
#: (each Text, tick labels included, reads this rc when it is made). Set once at import rather than with
#: ``rc_context`` around each figure, which swaps the global rc and races between threads.
LITERAL_TEXT = {"text.parse_math": False, "text.usetex": False}
matplotlib.rcParams.update(LITERAL_TEXT)
#: Larger than matplotlib's 10 pt: the figures are scaled down to the page's column, phones included.
matplotlib.rcParams.update(
    {"font.size": 11, "axes.labelsize": 11, "axes.titlesize": 13, "xtick.labelsize": 10, "ytick.labelsize": 11}
)

BLUE, RED, GREY = "#1f5fbf", "#b3261e", "0.45"
#: PNGs are drawn at twice the usual density so that they stay sharp on high-density screens.
PNG_DPI = 200


@dataclass(frozen=True)
class Bar:
    """One group of a bar (or dot) chart: its value with a 95 % interval, how many items it rests on, and
    ``note`` saying why the value is undefined (drawn in the gap)."""

    label: str
    value: float | None
    ci: tuple[float, float] | None = None
    n: int | None = None
    note: str | None = None
    highlight: bool = False


@dataclass(frozen=True)
class BarChart:
    """Horizontal bars (``style="bar"``) or dots with intervals (``"dot"``), one row per group, top to
    bottom; ``n_unit`` names what ``n`` counts; ``full_scale`` keeps 0..1 in view for coefficients."""

    title: str
    xlabel: str
    bars: tuple[Bar, ...]
    n_unit: str = "items"
    style: Literal["bar", "dot"] = "bar"
    full_scale: bool = True
    caption: str = ""
    value_format: str = "{:.2f}"
    #: a reference range drawn behind the rows (e.g. the physicians' own agreement), with its legend text
    band: tuple[float, float] | None = None
    band_label: str = ""
    #: figure width in inches; narrower charts stay legible when a phone shrinks them to its column
    width: float = 7.0


@dataclass(frozen=True)
class Point:
    label: str
    x: float
    y: float


@dataclass(frozen=True)
class ScatterChart:
    title: str
    xlabel: str
    ylabel: str
    points: tuple[Point, ...]
    caption: str = ""
    invert_x: bool = False


@dataclass(frozen=True)
class CalibrationBin:
    """One bin of a reliability diagram: the mean predicted probability, the mean observed value, how many."""

    mean_prob: float
    mean_outcome: float
    n: int


@dataclass(frozen=True)
class CalibrationChart:
    """A reliability diagram: each bin's mean observed value against its mean predicted probability, the point's
    area by its n, and the diagonal a perfectly calibrated judge would sit on; both axes 0..1."""

    title: str
    xlabel: str
    ylabel: str
    bins: tuple[CalibrationBin, ...]
    caption: str = ""


@dataclass(frozen=True)
class Distribution:
    """The values of one group (e.g. one system's scores on one QA type); n is ``len(values)``."""

    label: str
    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class Panel:
    title: str
    groups: tuple[Distribution, ...]


@dataclass(frozen=True)
class DistributionChart:
    """One panel per facet (e.g. QA type), and in each a box with its points per group (e.g. system), side by
    side on a shared axis so that groups can be compared."""

    title: str
    ylabel: str
    panels: tuple[Panel, ...] = field(default_factory=tuple)
    n_unit: str = "answers"
    empty_reason: str = "no data"
    #: the range the value axis always shows (widened only where a value lies outside it): a score bounded by 0 and
    #: 1 on a 0..1 axis, so that 0.7 beside 1.0 does not look like a collapse, as an axis zoomed to the data makes it
    y_range: tuple[float, float] | None = None


def draw(chart: BarChart | ScatterChart | DistributionChart | CalibrationChart, fmt: Fmt = "png") -> bytes:
    """The chart as PNG or SVG bytes."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"fmt must be 'png' or 'svg', got {fmt!r}")
    fonts.use_fonts()
    if isinstance(chart, BarChart):
        return _draw_bars(chart, fmt)
    if isinstance(chart, ScatterChart):
        return _draw_scatter(chart, fmt)
    if isinstance(chart, DistributionChart):
        return _draw_distributions(chart, fmt)
    if isinstance(chart, CalibrationChart):
        return _draw_calibration(chart, fmt)
    raise TypeError(f"not a chart: {type(chart).__name__}")


def _wrap(text: str, width: int = 70) -> str:
    return "\n".join(textwrap.wrap(text, width)) if text else ""


def _with_n(label: str, n: int | None, unit: str) -> str:
    if n is None:
        return label
    unit = unit.removesuffix("s") if n == 1 else unit
    return f"{label} (n = {n:,} {unit})" if unit else f"{label} (n = {n:,})"


def _draw_bars(chart: BarChart, fmt: Fmt) -> bytes:
    rows = chart.bars
    fig = Figure(figsize=(chart.width, 0.5 * max(len(rows), 1) + 1.5))
    ax = fig.add_subplot()
    if not rows:
        _no_data(ax)
        return _finish(fig, ax, chart.title, chart.caption, fmt)
    y = np.arange(len(rows))[::-1]
    numbers = [v for b in rows for v in (b.value, *(b.ci or ())) if _finite(v)] + list(chart.band or ())
    low = min([0.0, *numbers])
    high = max([1.0 if chart.full_scale else 0.0, *numbers])
    pad = 0.06 * (high - low or 1.0)
    ax.set_xlim(low - pad, high + pad)
    if chart.band is not None:
        # a range of one value (every physician alike) is still drawn, as a narrow band
        band_low, band_high = chart.band
        width = max(band_high - band_low, 0.004 * (high - low or 1.0))
        centre = (band_low + band_high) / 2
        ax.axvspan(centre - width / 2, centre + width / 2, color="#f2c14e", alpha=0.45, lw=0)
    for yi, b in zip(y, rows, strict=True):
        color = RED if b.highlight else BLUE
        if b.value is None or not _finite(b.value):
            ax.text(
                0,
                yi,
                " " + _wrap(f"undefined: {b.note or 'no value'}", 60),
                va="center",
                ha="left",
                fontsize=8,
                color=GREY,
                style="italic",
            )
            continue
        if chart.style == "bar":
            ax.barh(yi, b.value, height=0.6, color=color, alpha=0.85)
        else:
            ax.plot(b.value, yi, "o", color=color)
        whisker = _whisker(b.value, b.ci)
        if whisker is not None:
            ax.errorbar(b.value, yi, xerr=[[whisker[0]], [whisker[1]]], color="0.15", capsize=3, lw=1)
        right = b.value + (whisker[1] if whisker else 0.0)
        ax.text(right + pad / 3, yi, chart.value_format.format(b.value), va="center", fontsize=10, color="0.15")
    ax.set_yticks(y, [_with_n(b.label, b.n, chart.n_unit) for b in rows])
    ax.set_ylim(-0.7, len(rows) - 0.3)
    if chart.band is not None and chart.band_label:
        # the band's name in a strip of its own under the rows, so it never covers a dot
        ax.set_ylim(-1.4, len(rows) - 0.3)
        ax.text(sum(chart.band) / 2, -1.0, chart.band_label, ha="center", va="center", fontsize=9, color="0.25")
    ax.axvline(0, color="0.5", lw=0.8)
    ax.set_xlabel(chart.xlabel)
    ax.grid(axis="x", color="0.9")
    ax.set_axisbelow(True)
    return _finish(fig, ax, chart.title, chart.caption, fmt)


def _whisker(value: float, ci: tuple[float, float] | None) -> tuple[float, float] | None:
    """The lengths of an interval's whisker below and above ``value``, or None without a finite interval.

    Clipped at 0: the statistics give intervals that contain their estimate (:func:`stats.bootstrap.
    interval_containing`), but a stored one may miss it (reports computed before that rule, or by float noise),
    and matplotlib refuses a whisker of negative length; a plot never fails for it."""
    if ci is None or not all(_finite(c) for c in ci):
        return None
    return max(value - ci[0], 0.0), max(ci[1] - value, 0.0)


def _draw_scatter(chart: ScatterChart, fmt: Fmt) -> bytes:
    fig = Figure(figsize=(6.0, 4.6))
    ax = fig.add_subplot()
    points = [p for p in chart.points if _finite(p.x) and _finite(p.y)]
    if not points:
        _no_data(ax)
        return _finish(fig, ax, chart.title, chart.caption, fmt)
    ax.scatter([p.x for p in points], [p.y for p in points], s=28, color=BLUE, zorder=3)
    for p in points:
        ax.annotate(p.label, (p.x, p.y), fontsize=8, xytext=(4, 4), textcoords="offset points")
    ax.set_xlabel(chart.xlabel)
    ax.set_ylabel(chart.ylabel)
    ax.grid(color="0.92")
    ax.margins(0.15)
    if chart.invert_x:
        ax.invert_xaxis()
    return _finish(fig, ax, chart.title, chart.caption, fmt)


def _draw_calibration(chart: CalibrationChart, fmt: Fmt) -> bytes:
    fig = Figure(figsize=(5.0, 5.0))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color=GREY, linestyle="--", linewidth=1, label="perfectly calibrated")
    bins = [b for b in chart.bins if _finite(b.mean_prob) and _finite(b.mean_outcome) and b.n > 0]
    if bins:
        most = max(b.n for b in bins)
        ax.plot([b.mean_prob for b in bins], [b.mean_outcome for b in bins], color=BLUE, linewidth=1, zorder=2)
        ax.scatter(
            [b.mean_prob for b in bins],
            [b.mean_outcome for b in bins],
            s=[30 + 270 * b.n / most for b in bins],
            color=BLUE,
            alpha=0.8,
            zorder=3,
            label="the judge (area: answers in the bin)",
        )
        for b in bins:
            ax.annotate(
                f"n={b.n}", (b.mean_prob, b.mean_outcome), fontsize=8, xytext=(6, -10), textcoords="offset points"
            )
    else:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xlim(-0.04, 1.04)  # a bin at 0 or 1 drawn whole, not cut by the frame
    ax.set_ylim(-0.04, 1.04)
    ax.set_aspect("equal")
    ax.set_xlabel(chart.xlabel)
    ax.set_ylabel(chart.ylabel)
    ax.grid(color="0.92")
    ax.legend(loc="best", fontsize=9, framealpha=0.9)
    return _finish(fig, ax, chart.title, chart.caption, fmt)


def _draw_distributions(chart: DistributionChart, fmt: Fmt) -> bytes:
    panels = chart.panels
    if not any(g.n for p in panels for g in p.groups):
        fig = Figure(figsize=(7.0, 2.0))
        ax = fig.add_subplot()
        _no_data(ax, _wrap(chart.empty_reason, 60))
        return _finish(fig, ax, chart.title, "", fmt)
    ncols = 1 if len(panels) == 1 else 2
    nrows = math.ceil(len(panels) / ncols)
    widest = max(len(p.groups) for p in panels)
    fig = Figure(figsize=(max(7.0, 1.3 * widest * ncols), 3.3 * nrows + 0.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharey=True, squeeze=False)).ravel()
    rng = np.random.default_rng(0)  # fixed jitter: the same data always gives the same picture
    for ax, panel in zip(axes, panels, strict=False):
        positions = np.arange(1, len(panel.groups) + 1)
        filled = [(i, np.asarray(g.values, dtype=float)) for i, g in zip(positions, panel.groups, strict=True)]
        filled = [(i, v[np.isfinite(v)]) for i, v in filled]
        boxes = [(i, v) for i, v in filled if len(v)]
        if boxes:
            ax.boxplot(
                [v for _, v in boxes],
                positions=[i for i, _ in boxes],
                widths=0.55,
                showfliers=False,
                medianprops={"color": RED},
                boxprops={"color": "0.3"},
                whiskerprops={"color": "0.3"},
            )
            for i, v in boxes:
                ax.scatter(i + rng.uniform(-0.18, 0.18, len(v)), v, s=7, color=BLUE, alpha=0.5, zorder=3)
        for i, v in filled:
            if not len(v):
                ax.text(
                    i,
                    0.5,
                    "no scores",
                    rotation=90,
                    ha="center",
                    va="center",
                    fontsize=8,
                    color=GREY,
                    transform=ax.get_xaxis_transform(),
                )
        labels = [f"{_wrap(g.label, 14)}\nn = {len(v):,}" for g, (_, v) in zip(panel.groups, filled, strict=True)]
        ax.set_xticks(positions, labels, fontsize=8)
        ax.set_xlim(0.4, len(panel.groups) + 0.6)
        ax.set_title(panel.title, fontsize=10)
        ax.grid(axis="y", color="0.92")
        ax.set_axisbelow(True)
    if chart.y_range is not None:
        values = [v for p in panels for g in p.groups for v in g.values if _finite(v)]
        low, high = min([chart.y_range[0], *values]), max([chart.y_range[1], *values])
        pad = 0.04 * (high - low or 1.0)
        axes[0].set_ylim(low - pad, high + pad)  # the panels share the axis
    for ax in axes[: len(panels) : ncols]:
        ax.set_ylabel(chart.ylabel)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(chart.title, fontsize=12)
    return _render(fig, fmt)


def _finish(fig: Figure, ax, title: str, caption: str, fmt: Fmt) -> bytes:
    ax.set_title(title, fontsize=13)
    if caption:  # under the axis label, whatever the figure's height (offset in points, not figure fractions)
        ax.annotate(
            _wrap(caption, 100),
            (0, 0),
            xycoords="axes fraction",
            xytext=(0, -44),
            textcoords="offset points",
            va="top",
            fontsize=8,
            color=GREY,
        )
    return _render(fig, fmt)


def _render(fig: Figure, fmt: Fmt) -> bytes:
    if fmt not in ("png", "svg"):
        raise ValueError(f"fmt must be 'png' or 'svg', got {fmt!r}")
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(
        buf,
        format=fmt,
        bbox_inches="tight",
        dpi=PNG_DPI if fmt == "png" else None,
        metadata={"Date": None} if fmt == "svg" else None,
    )
    return buf.getvalue()


def _no_data(ax, text: str = "no data") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


def _finite(x: object) -> bool:
    return isinstance(x, int | float) and math.isfinite(float(x))


def stat_bar(label: str, result: StatResult, *, highlight: bool = False) -> Bar:
    """A bar for a statistic: its value, interval, the items it used and, when undefined, why."""
    return Bar(
        label=label,
        value=result.value,
        ci=result.ci if result.value is not None else None,
        n=result.n_items,
        note=result.undefined_reason,
        highlight=highlight,
    )
