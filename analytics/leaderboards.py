"""The Task-1 leaderboard (the paper's Table 2) from stored scoring runs, and the human preference leaderboard
of a study (Bradley-Terry strengths from the physicians' rankings)."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from analytics.models import AnswerScore, ScoringRun
from stats import leaderboard

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
