"""PromptCBLUE files in, the official report out: ``score_files(GOLD, PREDICTIONS)`` and :func:`format_text`.

GOLD is JSONL, one PromptCBLUE record per line (``sample_id``, ``task_dataset``, ``target``, ``answer_choices``;
``input`` and ``task_type`` may be there and are not needed), as the official dev.json. PREDICTIONS is JSONL with
``sample_id`` and the generated ``target``; other fields (whole test_predictions.json records) are ignored: task,
choices and input come from the gold record, and line order does not matter. Both are read with the strict JSONL
reader (:mod:`records.jsonl`). Refused, naming the file and line (from 1), the sample_id or the task: a line that is
not a JSON object, a missing or wrong-typed field, an unknown task, a duplicate sample_id, a prediction for an
unknown sample_id, a gold sample without a prediction, an empty gold answer of a classification task, and (unless
``present_tasks``) a gold file without every classification, generation and Text2DT task.

:func:`score_intervals` adds 95 % bootstrap intervals to each task's figure and to the overall (for the leaderboard).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metrics.promptcblue import TASKS, GoldSample, Scores, ScoringError, contributions, score, task_named
from records import jsonl
from records.jsonl import InputFileError, json_type
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_sums, interval_containing, percentile_interval
from stats.results import finite_or_none

MAX_TEXT_CHARS = 200_000


@dataclass(frozen=True)
class PromptCblueResult:
    report: dict  # the official {"score", "scoreJson"} (values ×100)
    scores: Scores


def _sample_id(record: dict, display: str, number: int) -> str:
    return jsonl.text_field(record, "sample_id", display, number, limit=500)


def read_gold(path, display: str | None = None) -> list[GoldSample]:
    display = jsonl.display_name(path, display)
    samples: list[GoldSample] = []
    seen: dict[str, int] = {}
    for number, record in jsonl.records(path, display):
        sample_id = _sample_id(record, display, number)
        if sample_id in seen:
            raise InputFileError(display, f"sample_id {sample_id!r} is also on line {seen[sample_id]}", line=number)
        seen[sample_id] = number
        name = jsonl.text_field(record, "task_dataset", display, number, limit=50)
        task = task_named(name)
        if task is None:
            raise InputFileError(
                display, f"{name!r} is not a PromptCBLUE task ({', '.join(t.name for t in TASKS)})", line=number,
                field="task_dataset",
            )  # fmt: skip
        # Kept exactly as written: the parser's rules (first line, last line, stripping) depend on every character.
        target = jsonl.text_field(
            record, "target", display, number, limit=MAX_TEXT_CHARS, allow_empty=True, strip=False
        )
        choices = record.get("answer_choices")
        if choices is not None and not (isinstance(choices, list) and all(isinstance(c, str) for c in choices)):
            raise InputFileError(
                display, f"must be a list of strings or null, not {json_type(choices)}", line=number,
                field="answer_choices",
            )  # fmt: skip
        samples.append(GoldSample(sample_id, task, target, choices))
    if not samples:
        raise InputFileError(display, "holds no record")
    return samples


def read_predictions(path, gold_ids: set[str], display: str | None = None) -> dict[str, str]:
    display = jsonl.display_name(path, display)
    predictions: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, record in jsonl.records(path, display):
        sample_id = _sample_id(record, display, number)
        if sample_id in lines:
            raise InputFileError(display, f"sample_id {sample_id!r} is also on line {lines[sample_id]}", line=number)
        if sample_id not in gold_ids:
            raise InputFileError(display, f"sample_id {sample_id!r} is not in the gold file", line=number)
        lines[sample_id] = number
        predictions[sample_id] = jsonl.text_field(
            record, "target", display, number, limit=MAX_TEXT_CHARS, allow_empty=True, strip=False
        )
    return predictions


def score_files(
    gold_path,
    predictions_path,
    *,
    present_tasks: bool = False,
    keep_samples: bool = False,
    gold_name: str | None = None,
    predictions_name: str | None = None,
) -> PromptCblueResult:
    """Read both files, score, and return the official report. Raises :class:`InputFileError` on bad input."""
    gold = read_gold(gold_path, gold_name)
    predictions = read_predictions(predictions_path, {sample.sample_id for sample in gold}, predictions_name)
    missing = [sample for sample in gold if sample.sample_id not in predictions]
    if missing:
        first = missing[0]
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise InputFileError(
            jsonl.display_name(predictions_path, predictions_name),
            f"no prediction for sample_id {first.sample_id!r} ({first.task.name}){more}",
        )
    try:
        scores = score(gold, predictions, present_tasks=present_tasks, keep_samples=keep_samples)
    except ScoringError as exc:
        raise InputFileError(jsonl.display_name(gold_path, gold_name), str(exc)) from exc
    return PromptCblueResult(scores.report, scores)


def format_text(result: PromptCblueResult) -> str:
    """A table: each task's headline figure (×100), its n and its parse misses, then the overall."""
    scores = result.scores
    rows = [("task", "metric", "score", "n", "parse misses", "official parser fails")]
    for task in TASKS:
        key = task.headline_key
        done = scores.tasks.get(task.name)
        if done is None:
            if scores.present_tasks:
                continue
            rows.append((task.name, key.removeprefix(task.name + "-"), f"{0.0:.2f}", "0", "-", "-"))
            continue
        rows.append(
            (
                task.name,
                key.removeprefix(task.name + "-"),
                f"{result.report['scoreJson'][key]:.2f}",
                str(done.n),
                f"{done.parse_misses} in {done.samples_with_misses} samples",
                str(done.official_parser_fails),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    if scores.present_tasks:
        lines.append(
            f"mean over the {len(scores.tasks)} tasks present: {result.report['score']:.4f} "
            "(not comparable to the official overall, which averages all 18 tasks)"
        )
    else:
        lines.append(f"overall (official, mean of the 18 tasks): {result.report['score']:.4f}")
    fails = sum(t.official_parser_fails for t in scores.tasks.values())
    if fails:
        lines.append(
            f"{fails} generated answers would have stopped the official parser (an unreadable CMedCausal or Text2DT "
            "line); they are read here with that line counted as a parse miss"
        )
    return "\n".join(lines) + "\n"


def task_seed(seed: int, index: int) -> int:
    """The seed of the task at ``index`` in :data:`TASKS`: derived from ``seed`` and the index, so that the same seed
    always draws the same resamples, and two tasks with as many samples do not draw the same ones."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def _stats_by_task(scores: Scores) -> dict[str, list]:
    if scores.samples is None:
        raise ValueError("bootstrap intervals need the per-sample statistics: score with keep_samples=True")
    by_task: dict[str, list] = {}
    for sample in scores.samples:
        by_task.setdefault(sample.task, []).append(sample.stats)
    return by_task


def task_resamples(
    scores: Scores, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> dict[str, np.ndarray]:
    """Each present task's figure on ``n_resamples`` resamples of its own samples (``(B,)``, NaN where undefined),
    in the official order; task ``i`` of :data:`TASKS` resamples with :func:`task_seed` ``(seed, i)``."""
    by_task = _stats_by_task(scores)
    resampled: dict[str, np.ndarray] = {}
    for index, task in enumerate(TASKS):
        if task.name not in by_task:
            continue
        matrix, statistic = contributions(task, by_task[task.name])
        outcome = bootstrap_sums(matrix, statistic, n_resamples=n_resamples, seed=task_seed(seed, index))
        resampled[task.name] = outcome.samples
    return resampled


def overall_resamples(scores: Scores, resampled: dict[str, np.ndarray]) -> np.ndarray:
    """The overall of each stratified resample: the tasks' resampled figures summed in the official order and
    divided as the report divides (by 18, an absent task adding 0; by the tasks present with ``present_tasks``).
    NaN where a task's figure is undefined in that resample."""
    if not resampled:
        raise ValueError("no task was resampled: there is no overall to resample")
    total = np.zeros(len(next(iter(resampled.values()))))
    for task in TASKS:
        if task.name in resampled:
            total = total + resampled[task.name]
    return total / _overall_divisor(scores)


def _overall_divisor(scores: Scores) -> int:
    return len(scores.tasks) if scores.present_tasks else len(TASKS)


def _overall_estimate(scores: Scores) -> float:
    total = 0.0
    for task in TASKS:
        if task.name in scores.tasks:
            total += scores.tasks[task.name].figure
    return total / _overall_divisor(scores)


def _interval(estimate: float, resampled: np.ndarray) -> tuple[float, float] | None:
    """The percentile interval of the defined resamples, widened to contain the estimate; None if none is defined."""
    percentile_low, percentile_high = percentile_interval(resampled)
    low, high = interval_containing(estimate, percentile_low[0], percentile_high[0])
    low, high = finite_or_none(low), finite_or_none(high)
    return (low, high) if low is not None and high is not None else None


def _method(scores: Scores, n_resamples: int) -> str:
    divisor = f"the {len(scores.tasks)} tasks present" if scores.present_tasks else f"{len(TASKS)} (an absent task 0)"
    return (
        f"Percentile bootstrap, 95 %, {n_resamples} resamples: each task's samples resampled with replacement within "
        f"the task, the overall from the same resamples (stratified by task) as the tasks' figures summed and divided "
        f"by {divisor}; resamples where a figure is undefined are left out, and an interval is widened to its estimate."
    )


def score_intervals(scores: Scores, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> dict:
    """95 % percentile bootstrap intervals, as fractions: ``{"tasks": {name: (low, high) | None}, "overall":
    (low, high) | None, "n_resamples", "seed", "method"}``, JSON-ready (an interval is a pair).

    ``tasks`` lists the tasks present, in the official order. A task's interval resamples its samples (None for a
    task of a single sample: nothing to resample). The overall's
    is stratified: each resample draws every task's samples within the task (the very resamples of the tasks'
    intervals), so each task keeps its size; None when no task has two samples. Needs ``scores.samples`` (score
    with ``keep_samples=True``); raises ValueError otherwise.
    """
    resampled = task_resamples(scores, n_resamples=n_resamples, seed=seed)
    tasks: dict[str, tuple[float, float] | None] = {}
    for name, figures in resampled.items():
        result = scores.tasks[name]
        tasks[name] = _interval(result.figure, figures) if result.n >= 2 else None
    any_resampled = any(result.n >= 2 for result in scores.tasks.values())
    overall = _interval(_overall_estimate(scores), overall_resamples(scores, resampled)) if any_resampled else None
    return {
        "tasks": tasks,
        "overall": overall,
        "n_resamples": n_resamples,
        "seed": seed,
        "method": _method(scores, n_resamples),
    }
