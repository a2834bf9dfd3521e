"""PromptCBLUE scoring inside the portal: a system's stored outputs to a release's PromptCBLUE items scored with the
official PromptCBLUE evaluation (:mod:`metrics.promptcblue`, at parity with the official scripts).

The gold is the release's frozen record of each item (``target``, ``answer_choices``, ``task_dataset``), or, for a
run over every answered item, the item as imported. Each sample is stored (:class:`PromptCblueScore`: both parsed
structures, the parse misses, the statistics and the sample's own score), the official report goes in the run's
``summary``, and each task's n, parse misses and 95 % bootstrap interval in its ``run_record``.

Two rules the official scripts do not need, because they read whole files:

- an item of the release the system did not answer is scored as an empty answer (the official code refuses a
  file with a missing prediction; scoring only the answered items would let a system raise its score by skipping
  hard items), and the leaderboard says how many there were;
- a release without every classification, generation and Text2DT task cannot have the official overall (the
  official code fails on it): the run scores the tasks present and its overall is their mean, marked as not
  comparable to the official figure.

Writes are an upsert on (run, item) and the summary is written last, in one transaction: a task killed and
redelivered rewrites the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from analytics.models import PromptCblueScore, ScoringRun
from evaluation.promptcblue import score_intervals
from metrics.promptcblue import TASKS, GoldSample, Scores, ScoringError, sample_score, score, task_named
from metrics.promptcblue.scoring import MUST_BE_PRESENT
from metrics.promptcblue.text2dt import TreeCounts
from portal.errors import DomainError
from portal.jobs import Progress
from ranking.models import SystemOutput

PROMPTCBLUE_BENCHMARK = "promptcblue"


@dataclass
class RunInputs:
    """What one run scores: the gold samples (release order), each sample's prediction, and where it came from."""

    gold: list[GoldSample] = field(default_factory=list)
    predictions: dict[str, str] = field(default_factory=dict)
    item_of: dict[str, int] = field(default_factory=dict)  # sample_id -> item id
    output_of: dict[str, int] = field(default_factory=dict)  # sample_id -> output id (answered samples only)
    left_out: dict[str, int] = field(default_factory=dict)  # task_dataset not a PromptCBLUE task -> items

    @property
    def unanswered(self) -> int:
        return len(self.gold) - len(self.output_of)


def _record_sample(record: dict) -> tuple[str, str, str, list | None]:
    """(sample_id, task_dataset, target, answer_choices) of a frozen or imported PromptCBLUE record."""
    choices = record.get("answer_choices")
    return (
        str(record.get("sample_id", "")),
        str(record.get("task_dataset", "")),
        record.get("target") if isinstance(record.get("target"), str) else "",
        choices if isinstance(choices, list) else None,
    )


def _prediction(output: SystemOutput) -> str:
    # The text exactly as imported: the official parser's rules depend on every character.
    return output.raw if isinstance(output.raw, str) else output.response


def run_inputs(run: ScoringRun) -> RunInputs:
    """The gold and predictions of ``run``: every PromptCBLUE item of its release (unanswered ones as empty
    answers), or every PromptCBLUE item its system answered."""
    found = SystemOutput.objects.filter(system=run.system, item__benchmark=PROMPTCBLUE_BENCHMARK)
    if run.release is None:
        found = found.select_related("item")
    outputs = {output.item_id: output for output in found}
    entries: list[tuple[int, dict]]
    if run.release is not None:
        entries = list(run.release.items.filter(item__benchmark=PROMPTCBLUE_BENCHMARK).values_list("item_id", "record"))
    else:
        entries = [(item_id, outputs[item_id].item.raw) for item_id in sorted(outputs)]
    inputs = RunInputs()
    for item_id, record in entries:
        sample_id, task_name, target, choices = _record_sample(record or {})
        task = task_named(task_name)
        if task is None or not sample_id:
            inputs.left_out[task_name or "(none)"] = inputs.left_out.get(task_name or "(none)", 0) + 1
            continue
        inputs.gold.append(GoldSample(sample_id, task, target, choices))
        inputs.item_of[sample_id] = item_id
        output = outputs.get(item_id)
        inputs.predictions[sample_id] = _prediction(output) if output is not None else ""
        if output is not None:
            inputs.output_of[sample_id] = output.pk
    return inputs


def stats_json(stats: Any) -> Any:
    """A sample's statistics as JSON: tuples become lists, a tree's counts an object."""
    if isinstance(stats, TreeCounts):
        return {"edit": stats.edit, "max_edit": stats.max_edit}
    if isinstance(stats, tuple | list):
        return [stats_json(value) for value in stats]
    return stats


def _official_possible(gold: list[GoldSample]) -> bool:
    present = {sample.task.name for sample in gold}
    return all(task.name in present for task in TASKS if task.kind in MUST_BE_PRESENT)


def promptcblue_run_execute(*, run: ScoringRun, progress: Progress | None = None) -> ScoringRun:
    """Score the run's PromptCBLUE samples and store each sample, the report and the intervals (safe to run twice)."""
    inputs = run_inputs(run)
    left = f" ({sum(inputs.left_out.values())} items name no PromptCBLUE task)" if inputs.left_out else ""
    if not inputs.gold and run.release is not None:
        raise DomainError(f"release {run.release} holds no PromptCBLUE item to score{left}")
    if not inputs.output_of:
        raise DomainError(
            f"{run.system} has no outputs for the PromptCBLUE items in this scope{left}; import its outputs first"
        )
    official = _official_possible(inputs.gold)
    if progress is not None:
        progress.start(len(inputs.gold), "scoring PromptCBLUE samples")

    def advance(done: int, total: int) -> None:
        if progress is not None:
            progress.advance(done - progress_state["done"], "scoring PromptCBLUE samples")
            progress_state["done"] = done

    progress_state = {"done": 0}
    try:
        scores = score(inputs.gold, inputs.predictions, present_tasks=not official, keep_samples=True, progress=advance)
    except ScoringError as exc:
        raise DomainError(f"the release's PromptCBLUE gold cannot be scored: {exc}") from exc
    if progress is not None:
        progress.start(1, "bootstrap intervals")
    intervals = score_intervals(scores, seed=run.seed or 0)
    rows = _sample_rows(run, inputs, scores)
    with transaction.atomic():
        PromptCblueScore.objects.bulk_create(
            rows,
            batch_size=2000,
            update_conflicts=True,
            unique_fields=["run", "item"],
            update_fields=[
                "output", "task", "sample_id", "answered", "score", "gold", "prediction", "parse_misses",
                "n_parse_misses", "official_parser_fails", "stats",
            ],
        )  # fmt: skip
        run.summary = scores.report
        run.run_record = _run_record(scores, intervals, inputs, official)
        run.n_items = len(rows)
        run.finished_at = timezone.now()
        run.save(update_fields=["summary", "run_record", "n_items", "finished_at"])
    if progress is not None:
        progress.advance(1, "bootstrap intervals")
    return run


def _sample_rows(run: ScoringRun, inputs: RunInputs, scores: Scores) -> list[PromptCblueScore]:
    tasks = {task.name: task for task in TASKS}
    return [
        PromptCblueScore(
            run=run,
            item_id=inputs.item_of[sample.sample_id],
            output_id=inputs.output_of.get(sample.sample_id),
            task=sample.task,
            sample_id=sample.sample_id,
            answered=sample.sample_id in inputs.output_of,
            score=sample_score(tasks[sample.task], sample.stats),
            gold=sample.gold,
            prediction=sample.prediction,
            parse_misses=list(sample.parse_misses),
            n_parse_misses=len(sample.parse_misses),
            official_parser_fails=sample.official_parser_fails,
            stats=stats_json(sample.stats),
        )
        for sample in scores.samples or []
    ]


def _run_record(scores: Scores, intervals: dict, inputs: RunInputs, official: bool) -> dict:
    unanswered: dict[str, int] = {}
    for sample in inputs.gold:
        if sample.sample_id not in inputs.output_of:
            unanswered[sample.task.name] = unanswered.get(sample.task.name, 0) + 1
    return {
        "evaluation": "promptcblue-official",
        "official_overall": official,
        "tasks": {
            name: {
                "n": result.n,
                "figure": result.figure,
                "ci": intervals["tasks"].get(name),
                "parse_misses": result.parse_misses,
                "samples_with_misses": result.samples_with_misses,
                "official_parser_fails": result.official_parser_fails,
                "unanswered": unanswered.get(name, 0),
            }
            for name, result in scores.tasks.items()
        },
        "overall_ci": intervals["overall"],
        "bootstrap": {key: intervals[key] for key in ("n_resamples", "seed", "method")},
        "unanswered": inputs.unanswered,
        "left_out": inputs.left_out,
    }
