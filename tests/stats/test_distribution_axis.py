"""A box plot of scores bounded by 0 and 1 is drawn on a 0..1 axis, not on one zoomed to the data, where 0.7 beside
1.0 looked like a collapse."""

from __future__ import annotations

import pytest

from analytics.presentation.charts import task1_chart
from stats import plots
from stats.plots import Distribution, DistributionChart, Panel


@pytest.fixture
def drawn_axes(monkeypatch):
    """The axes of the figures :func:`stats.plots.draw` renders, read before the bytes are written."""
    seen = []
    render = plots._render

    def keep(fig, fmt):
        seen.extend(fig.axes)
        return render(fig, fmt)

    monkeypatch.setattr(plots, "_render", keep)
    return seen


def _chart(values_a, values_b, y_range=None):
    panel = Panel("Multi-hop", (Distribution("A", tuple(values_a)), Distribution("B", tuple(values_b))))
    return DistributionChart("Semantic", "score", (panel,), y_range=y_range)


def test_a_bounded_score_axis_shows_zero_to_one(drawn_axes):
    plots.draw(_chart([0.7, 0.7, 0.72], [1.0, 0.98, 1.0], y_range=(0.0, 1.0)), "svg")
    low, high = drawn_axes[0].get_ylim()
    assert low <= 0.0 and 1.0 <= high < 1.1


def test_a_value_outside_the_range_widens_the_axis(drawn_axes):
    plots.draw(_chart([-0.2, 0.5], [1.3, 0.9], y_range=(0.0, 1.0)), "png")
    low, high = drawn_axes[0].get_ylim()
    assert low <= -0.2 and high >= 1.3


def test_the_task1_plots_ask_for_the_zero_to_one_axis(drawn_axes):
    chart = task1_chart({"multi_hop_inverse": {"A": [0.7, 0.7], "B": [1.0, 1.0]}}, metric="semantic", profile="p")
    plots.draw(chart, "svg")
    low, high = drawn_axes[0].get_ylim()
    assert low <= 0.0 and high >= 1.0
