"""The Task-1 leaderboard (the paper's Table 2) from stored scoring runs, and the human preference leaderboard
of a study (Bradley-Terry strengths from the physicians' rankings)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analytics.models import AnswerScore, ScoringRun
from annotation.qa_types import QAType
from stats import leaderboard
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_sums, with_interval
from stats.results import StatResult, same_value

TABLE2_COLUMNS = [
    ("overall", "overall_effectiveness", "Overall"),
    ("mc", "multiple_choice_average", "MC"),
    ("tf", "true_false_accuracy", "TF"),
    ("list_f1", "list_overall_macro_avg_f1_score", "List F1"),
    ("short", "short_semantic_match_score", "Short"),
    ("short_inverse", "short_inverse_semantic_match_score", "Short inv."),
    ("multi_hop", "multi_hop_semantic_match_score", "Multi-hop"),
    ("multi_hop_inverse", "multi_hop_inverse_semantic_match_score", "Multi-hop inv."),
]
# Answers to other benchmarks' items (PromptCBLUE) have text metrics only (by characters for Chinese); shown when
# some run has them.
OTHER_COLUMNS = [
    ("other_rouge", "other_benchmarks_rouge", "Other benchmarks ROUGE"),
    ("other_bleu", "other_benchmarks_bleu", "Other benchmarks BLEU"),
]


def task1_columns(rows: list[dict]) -> list[tuple[str, str, str]]:
    """The Table 2 columns, plus the other-benchmark columns when a row has a value there."""
    shown = any(row.get(key) is not None for row in rows for key, _, _ in OTHER_COLUMNS)
    return TABLE2_COLUMNS + (OTHER_COLUMNS if shown else [])


#: Per column: the QA types whose answers it averages and the answer score it averages (the public scorer's
#: per-type figures are plain means of these, except the label-macro list F1: see :func:`task1_cells`).
CELL_SOURCES = {
    "tf": ((QAType.TRUE_FALSE,), "correct"),
    "mc": ((QAType.MULTIPLE_CHOICE,), "correct"),
    "list_f1": ((QAType.LIST,), "f1"),
    "short": ((QAType.SHORT,), "semantic"),
    "short_inverse": ((QAType.SHORT_INVERSE,), "semantic"),
    "multi_hop": ((QAType.MULTI_HOP,), "semantic"),
    "multi_hop_inverse": ((QAType.MULTI_HOP_INVERSE,), "semantic"),
    "other_rouge": ((QAType.GENERIC,), "rouge"),
    "other_bleu": ((QAType.GENERIC,), "bleu"),
}
#: The seven parts of Overall, an unweighted mean of the per-type figures; a type without any answer counts 0.
OVERALL_PARTS = ("tf", "mc", "list_f1", "short", "short_inverse", "multi_hop", "multi_hop_inverse")
NOT_A_MEAN = "this figure is not a mean over the answers (the list's label-macro F1), so items cannot be resampled"


@dataclass(frozen=True)
class Task1Cell:
    """One figure of the Task-1 table: its value, the answers it rests on and its 95 % bootstrap interval over
    items (None with ``reason`` where there is none)."""

    value: float | None
    n: int
    ci: tuple[float, float] | None = None
    reason: str | None = None


def _mean_cell(value, values: list[float], *, n_resamples: int, seed: int) -> Task1Cell:
    n = len(values)
    if value is None or not n:
        return Task1Cell(value, n, reason="no answers (the scorer counts 0)")
    if not same_value(float(np.mean(values)), float(value)):
        return Task1Cell(value, n, reason=NOT_A_MEAN)
    if n < 2:
        return Task1Cell(value, n, reason="one answer: no interval")
    outcome = bootstrap_sums(
        np.asarray(values, dtype=float)[:, None], lambda sums: sums[:, 0] / n, n_resamples=n_resamples, seed=seed
    )
    result = with_interval(StatResult("mean", float(value), n_items=n), outcome)
    return Task1Cell(value, n, result.ci)


def _overall_cell(value, parts: dict[str, list[float]], cells: dict, *, n_resamples: int, seed: int) -> Task1Cell:
    """Overall over all the run's ClinIQLink answers, resampled together: each resample recomputes the seven
    type means from the drawn items (a type with answers that a resample misses makes that resample undefined)."""
    n = sum(len(parts[key]) for key in OVERALL_PARTS)
    if value is None or not n:
        return Task1Cell(value, n, reason="no answers")
    if any(cells[key].reason == NOT_A_MEAN for key in OVERALL_PARTS):
        return Task1Cell(value, n, reason="one of its parts " + NOT_A_MEAN.removeprefix("this figure "))
    present = [key for key in OVERALL_PARTS if parts[key]]
    rows = np.zeros((n, 2 * len(present)))
    start = 0
    for j, key in enumerate(present):
        values = parts[key]
        rows[start : start + len(values), 2 * j] = 1.0
        rows[start : start + len(values), 2 * j + 1] = values
        start += len(values)

    def overall(sums: np.ndarray) -> np.ndarray:
        means = sums[:, 1::2] / sums[:, 0::2]  # NaN where a resample drew none of a type
        return means.sum(axis=1) / len(OVERALL_PARTS)  # the absent types add 0

    if not same_value(float(overall(rows.sum(axis=0)[None])[0]), float(value)):
        return Task1Cell(value, n, reason=NOT_A_MEAN)
    if n < 2:
        return Task1Cell(value, n, reason="one answer: no interval")
    outcome = bootstrap_sums(rows, overall, n_resamples=n_resamples, seed=seed)
    result = with_interval(StatResult("overall", float(value), n_items=n), outcome)
    return Task1Cell(value, n, result.ci)


def task1_cells(
    run: ScoringRun, row: dict, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> dict[str, Task1Cell]:
    """Every figure of ``row`` (a :func:`task1_table` row of ``run``) with n and a 95 % percentile bootstrap
    interval over the run's items (:mod:`stats.bootstrap`), from the run's stored answer scores.

    An item without an answer is not in the run at all (the scorer sees only the answers there are), so every
    figure is over the answered items. Where the stored figure is not the mean of its answers' scores (the public
    profile's list F1 is a macro over option labels, and Overall contains it) the cell has no interval and says
    why, rather than resampling a different statistic."""
    parts: dict[str, list[float]] = {key: [] for key in CELL_SOURCES}
    by_type: dict[str, list[str]] = {}
    for key, (qa_types, _) in CELL_SOURCES.items():
        for qa_type in qa_types:
            by_type.setdefault(str(qa_type), []).append(key)
    fields = sorted({field for _, field in CELL_SOURCES.values()})
    for score in AnswerScore.objects.filter(run=run).order_by("pk").values("qa_type", *fields):
        for key in by_type.get(score["qa_type"], ()):
            value = score[CELL_SOURCES[key][1]]
            if value is not None:
                parts[key].append(float(value))
    cells = {key: _mean_cell(row.get(key), values, n_resamples=n_resamples, seed=seed) for key, values in parts.items()}
    cells["overall"] = _overall_cell(row.get("overall"), parts, cells, n_resamples=n_resamples, seed=seed)
    return cells


def release_size(release) -> int | None:
    """How many items the release holds (None: no release, the table is over whatever each system answered)."""
    return release.items.count() if release is not None else None


def latest_runs(*, release=None, profile: str = "cliniqlink-2025") -> list[ScoringRun]:
    runs = ScoringRun.objects.filter(profile=profile, finished_at__isnull=False, release=release).select_related(
        "system"
    )
    latest: dict[int, ScoringRun] = {}
    for run in runs.order_by("created_at"):
        latest[run.system_id] = run
    return list(latest.values())


def default_release(*, profile: str = "cliniqlink-2025"):
    """The release a leaderboard opens on: the newest one with a finished scoring run for the profile (None: the
    answered items, when no release has been scored). Submissions are scored on releases, so opening on "all
    answered items" showed newcomers an empty table."""
    run = (
        ScoringRun.objects.filter(profile=profile, finished_at__isnull=False, release__isnull=False)
        .select_related("release")
        .order_by("-release__created_at")
        .first()
    )
    return run.release if run else None


def task1_table(*, release=None, profile: str = "cliniqlink-2025", sort: str = "overall") -> list[dict]:
    rows = []
    for run in latest_runs(release=release, profile=profile):
        row = {"system": run.system.name, "run_id": run.pk, "n_items": run.n_items}
        row.update({key: run.summary.get(summary_key) for key, summary_key, _ in TABLE2_COLUMNS + OTHER_COLUMNS})
        rows.append(row)
    keys = {key for key, _, _ in TABLE2_COLUMNS + OTHER_COLUMNS} | {"system"}
    sort_key = sort if sort in keys else "overall"
    reverse = sort_key != "system"
    rows.sort(
        key=lambda r: (
            (r[sort_key] is None, r[sort_key] if not reverse else -(r[sort_key] or 0))
            if sort_key != "system"
            else r["system"]
        )
    )
    return rows


def score_distributions(
    *, release=None, profile: str = "cliniqlink-2025", metric: str = "semantic"
) -> dict[str, dict[str, list[float]]]:
    """Per QA type and per system, the per-answer values of ``metric`` over the latest runs (the paper-style
    box plots, one box per system so that systems can be compared)."""
    runs = [run.pk for run in latest_runs(release=release, profile=profile)]
    out: dict[str, dict[str, list[float]]] = {}
    for qa_type, system, value in (
        AnswerScore.objects.filter(run_id__in=runs)
        .exclude(**{f"{metric}__isnull": True})
        .values_list("qa_type", "run__system__name", metric)
    ):
        out.setdefault(qa_type, {}).setdefault(system, []).append(float(value))
    return out


def human_leaderboard(
    ranks: pd.DataFrame, reference: Iterable[str], *, n_resamples: int, seed: int
) -> tuple[list[dict], list[str]]:
    """The physicians' leaderboard of a study: one row per system (best first) with its Bradley-Terry strength and
    interval, win rate and mean rank, and the board's notes. ``ranks``: item, annotator, answer, rank, system
    (:func:`analytics.selectors.study_rankings`); ``reference``: the names of the reference pseudo-systems."""
    board = leaderboard.bradley_terry_leaderboard(ranks, n_resamples=n_resamples, seed=seed)
    reference = set(reference)
    rows = [
        {
            "system": str(s.system),
            "strength": s.strength,
            "strength_ci": list(s.strength_ci) if s.strength_ci else None,
            "win_rate": s.win_rate,
            "mean_rank": s.mean_rank,
            "is_reference": str(s.system) in reference,
            "n_questions": s.n_items,
        }
        for s in board.standings
    ]
    return rows, list(board.notes)
