"""Plot helpers return PNG/SVG bytes and survive degenerate data."""

from __future__ import annotations

import pytest

from analytics.presentation.charts import render_plot
from stats.plots import (
    agreement_bar_chart,
    rank_vs_metric_scatter,
    score_boxplots,
)
from stats.results import StatResult, undefined

PNG = b"\x89PNG\r\n\x1a\n"


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
