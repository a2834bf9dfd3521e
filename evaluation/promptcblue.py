"""PromptCBLUE files in, the official report out: ``score_files(GOLD, PREDICTIONS)`` and :func:`format_text`.

GOLD is JSONL, one PromptCBLUE record per line (``sample_id``, ``task_dataset``, ``target``, ``answer_choices``;
``input`` and ``task_type`` may be there and are not needed), as the official dev.json. PREDICTIONS is JSONL with
``sample_id`` and the generated ``target``; other fields (whole test_predictions.json records) are ignored: task,
choices and input come from the gold record, and line order does not matter. Both are read with the strict JSONL
reader (:mod:`records.jsonl`). Refused, naming the file and line (from 1), the sample_id or the task: a line that is
not a JSON object, a missing or wrong-typed field, an unknown task, a duplicate sample_id, a prediction for an
unknown sample_id, a gold sample without a prediction, an empty gold answer of a classification task, and (unless
``present_tasks``) a gold file without every classification, generation and Text2DT task.
"""

from __future__ import annotations

from dataclasses import dataclass

from metrics.promptcblue import TASKS, GoldSample, Scores, ScoringError, score, task_named
from records import jsonl
from records.jsonl import InputFileError, json_type

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
