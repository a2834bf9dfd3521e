"""Charts return PNG/SVG bytes and survive degenerate data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from analytics.presentation.charts import render_plot
from stats.plots import BarChart, Distribution, DistributionChart, Fmt, Panel, Point, ScatterChart, draw, stat_bar
from stats.results import StatResult, undefined

PNG = b"\x89PNG\r\n\x1a\n"


# Each kind of chart built from plain statistics, so that the tests below reach every drawing path with awkward data
# (the pages build theirs in analytics.presentation.charts).
def agreement_bar_chart(
    results: Mapping[str, StatResult], *, title: str = "", ylabel: str = "agreement", fmt: Fmt = "png"
) -> bytes:
    """One bar per group (e.g. QA type) with its 95 % interval as a whisker; undefined groups say why."""
    return draw(BarChart(title, ylabel, tuple(stat_bar(str(k), r) for k, r in results.items())), fmt)


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
    if len(human) != len(metric):
        human, metric = [], []
    labels = list(labels) if labels is not None else [""] * len(human)
    points = tuple(Point(str(lab), float(h), float(m)) for lab, h, m in zip(labels, human, metric, strict=False))
    return draw(ScatterChart(title, xlabel, ylabel, points), fmt)


def score_boxplots(
    scores_by_type: Mapping[str, Sequence[float]], *, ylabel: str = "score", title: str = "", fmt: Fmt = "png"
) -> bytes:
    """Box plot of scores per group in one panel (non-finite scores dropped; empty groups say so)."""
    groups = tuple(Distribution(str(k), tuple(float(x) for x in v)) for k, v in scores_by_type.items())
    return draw(DistributionChart(title, ylabel, (Panel("", groups),) if groups else ()), fmt)


def is_svg(data: bytes) -> bool:
    head = data[:300].lstrip()
    return head.startswith(b"<?xml") and b"<svg" in data[:2000]


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_agreement_bar_chart(fmt):
    res = {
        "true_false": StatResult("a", 0.6, 0.5, 0.7, n_items=40),
        "list": undefined("a", "only one item has two or more ratings"),
    }
    out = agreement_bar_chart(res, title="alpha", fmt=fmt)
    assert out.startswith(PNG) if fmt == "png" else is_svg(out)
    assert agreement_bar_chart({}).startswith(PNG)


def test_scatter():
    assert rank_vs_metric_scatter([-1.0, -2.0, -3.0], [0.9, 0.5, 0.1], labels=["a", "b", "c"]).startswith(PNG)
    assert is_svg(rank_vs_metric_scatter([], [], fmt="svg"))
    assert rank_vs_metric_scatter([float("nan")], [1.0]).startswith(PNG)


def test_score_boxplots():
    assert score_boxplots({"tf": [0.1, 0.5, 0.9], "list": []}).startswith(PNG)
    assert score_boxplots({}).startswith(PNG)
    assert is_svg(score_boxplots({"tf": [float("inf")]}, fmt="svg"))
    with pytest.raises(ValueError):
        score_boxplots({"tf": [1.0]}, fmt="gif")


# Unbalanced mathtext: matplotlib's parser raises ValueError on it when text.parse_math is on.
HOSTILE = r"$\frac{GPT$"


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_every_chart_draws_dollar_text_literally(fmt):
    charts = [
        agreement_bar_chart({HOSTILE: StatResult(name="alpha", value=0.5, n_items=3)}, title=HOSTILE, fmt=fmt),
        rank_vs_metric_scatter([1.0, 2.0], [0.1, 0.2], labels=[HOSTILE, "$x^2$"], title=HOSTILE, fmt=fmt),
        score_boxplots({HOSTILE: [0.1, 0.5]}, ylabel=HOSTILE, fmt=fmt),
    ]
    assert all(chart for chart in charts)


def test_the_report_leaderboard_plot_draws_a_dollar_system_name():
    row = {"system": HOSTILE, "strength": 0.0, "strength_ci": [-0.5, 0.5], "is_reference": False}
    assert render_plot("study", {"human_leaderboard": [row]}, "human_leaderboard", "png")


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_a_bar_whose_interval_misses_its_value_is_still_drawn(fmt):
    """Usability F16: a stored interval 1e-9 beside its estimate gave the whisker a negative length and matplotlib
    raised ("'xerr' must not contain negative values"): the report's headline plot was a 500. Plots never fail:
    the whisker is clipped at the value."""
    from stats.plots import Bar, BarChart, draw

    bars = (
        Bar("always loses", -3.8791134288893234, (-3.879113434, -3.879113430061953), n=2),
        Bar("always wins", 4.771117576553713, (4.771117578142132, 4.771117578142132), n=2),
        Bar("inside", 0.0, (-0.5, 0.5), n=2),
    )
    for style in ("bar", "dot"):
        out = draw(BarChart("t", "x", bars, style=style, full_scale=False), fmt)
        assert out.startswith(PNG) if fmt == "png" else is_svg(out)


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_every_kind_of_chart_draws_the_smallest_data(fmt):
    """One value, one group, zero-width intervals, all values equal, a band of one value, nothing marked."""
    from stats.plots import Bar, BarChart, Distribution, DistributionChart, Panel, Point, ScatterChart, draw
    from stats.stacked_plots import StackedBar, StackedBarChart, draw_stacked

    charts = [
        BarChart("one bar", "x", (Bar("only", 0.82, (0.82, 0.82), n=1),)),
        BarChart("equal", "x", (Bar("a", 1.0, (1.0, 1.0), n=2), Bar("b", 1.0, (1.0, 1.0), n=2)), style="dot"),
        BarChart("band", "x", (Bar("a", 0.5, n=1),), band=(0.7, 0.7), band_label="physicians"),
        BarChart("undefined", "x", (Bar("a", None, note="only one ranker"),), full_scale=False),
        BarChart("negative", "x", (Bar("a", -5.3, (-5.3, -5.3), n=1),), full_scale=False),
        ScatterChart("one point", "x", "y", (Point("a", 2.0, 0.5),), invert_x=True),
        ScatterChart("same point", "x", "y", (Point("a", 1.0, 1.0), Point("b", 1.0, 1.0))),
        DistributionChart("one value", "y", (Panel("p", (Distribution("a", (0.5,)),)),)),
        DistributionChart("one empty", "y", (Panel("p", (Distribution("a", ()), Distribution("b", (1.0, 1.0)))),)),
    ]
    for chart in charts:
        out = draw(chart, fmt)
        assert out.startswith(PNG) if fmt == "png" else is_svg(out), chart.title
    stacked = [
        StackedBarChart("nothing marked", "share", ("x", "y"), (StackedBar("a", (0.0, 0.0), n=0),)),
        StackedBarChart("one part", "share", ("x", "y"), (StackedBar("a", (1.0, 0.0), n=1),)),
        StackedBarChart("no bars", "share", ("x", "y"), ()),
    ]
    for chart in stacked:
        out = draw_stacked(chart, fmt)
        assert out.startswith(PNG) if fmt == "png" else is_svg(out), chart.title
