"""The Task-1 leaderboard as people read it: per system how much of the release it answered, and per figure its
value rounded to what its interval supports, the interval and n."""

from __future__ import annotations

import math

from analytics.leaderboards import Task1Cell
from analytics.presentation.tables import number
from stats.results import same_value

#: The most decimals a Task-1 figure is shown with: past the third, the figures differ by noise of the scorer.
MAX_DECIMALS = 3


def decimals_for(ci: tuple[float, float] | None) -> int:
    """Decimals an interval supports: the first digit in which its bounds can differ (an interval 0.2 wide reads at
    one decimal, 0.02 wide at two), between 1 and :data:`MAX_DECIMALS`; without an interval the most."""
    if ci is None:
        return MAX_DECIMALS
    width = abs(ci[1] - ci[0])
    if same_value(width, 0.0):
        return MAX_DECIMALS
    return max(1, min(MAX_DECIMALS, -math.floor(math.log10(width))))


def coverage_text(answered: int, total: int | None) -> str:
    """How much of the release a system answered, in words, and what the scorer did with the rest.

    The scorer sees only the answers a system gave: an item without one is not scored at all, so each QA type's
    figure is the mean over the items answered, and a type with no answer at all counts 0 (also in Overall)."""
    if total is None:
        return f"{answered:,} item{'s' if answered != 1 else ''} answered (no release chosen: all it answered)"
    if answered >= total:
        return f"all {total:,} release items answered"
    missing = total - answered
    which = "the missing one is" if missing == 1 else f"the {missing:,} missing ones are"
    return (
        f"{answered:,} of {total:,} release items answered; {which} not scored: each QA type's score is the mean "
        "over its answered items (a QA type with no answer at all scores 0, in Overall too)"
    )


def cell_display(cell: Task1Cell) -> dict:
    """A table cell: ``text`` (the value), ``interval`` ("0.91 – 1.00", or why there is none) and ``n``."""
    digits = decimals_for(cell.ci)
    if cell.ci is not None and same_value(cell.ci[0], cell.ci[1]):
        interval = f"not estimable from {cell.n:,} answers"
    elif cell.ci is not None:
        interval = f"{number(cell.ci[0], digits)} – {number(cell.ci[1], digits)}"
    else:
        interval = cell.reason or "no interval"
    return {
        "text": number(cell.value, digits),
        "interval": interval,
        "has_interval": cell.ci is not None,
        "n": cell.n,
    }


def task1_display(rows: list[dict], cells: dict[int, dict[str, Task1Cell]], total: int | None) -> list[dict]:
    """The table's rows: each :func:`analytics.leaderboards.task1_table` row with its coverage sentence and, per
    column key, its displayed cell (``cells``: per run id, the run's :func:`analytics.leaderboards.task1_cells`)."""
    shown = []
    for row in rows:
        run_cells = cells.get(row["run_id"], {})
        shown.append(
            {
                **row,
                "coverage": coverage_text(row["n_items"], total),
                "complete": total is None or row["n_items"] >= total,
                "cells": {key: cell_display(cell) for key, cell in run_cells.items()},
            }
        )
    return shown
