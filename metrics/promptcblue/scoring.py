"""Per-task scores and the overall, as the official ``evaluators.py`` and ``evaluate.py`` compute them.

Each task's figure is a fraction (the official ``scores``); :func:`official_report` multiplies every figure by 100
as the official script does before writing ``scoreJson``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from .tasks import CLASSIFICATION, EXTRACTION, GENERATION, TASKS, TREE, Task
from .text2dt import TreeCounts, tree_counts, tree_edit_ratio

# What the official evaluator scores in place of an empty text, once tokenised (rouge refuses an empty one).
EMPTY_TEXT = "无 。"


def instance_key(instance: dict) -> tuple[str, ...]:
    """An extraction instance as the official evaluator compares it: the JSON of each value, keys sorted.

    Deliberate: a list value (CHIP-CDEE's 描述词, 解剖部位) is compared as written, so its order matters; a nested
    dict (CMedCausal's conditional object) keeps its key order, as json.dumps writes it.
    """
    return tuple(json.dumps(instance[key], ensure_ascii=False) for key in sorted(instance))


def extraction_counts(gold: list[dict], predicted: list[dict]) -> tuple[int, int, int]:
    """One sample's (tp, fp, fn) over the sets of instance keys."""
    gold_keys = {instance_key(instance) for instance in gold}
    predicted_keys = {instance_key(instance) for instance in predicted}
    tp = len(gold_keys & predicted_keys)
    return tp, len(predicted_keys - gold_keys), len(gold_keys - predicted_keys)


def micro_f1(counts: Sequence[tuple[int, int, int]]) -> float:
    tp = sum(c[0] for c in counts)
    fp = sum(c[1] for c in counts)
    fn = sum(c[2] for c in counts)
    if not tp:
        return 0
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    return 2 * precision * recall / (precision + recall)


def classification_f1(gold: Sequence[str], predicted: Sequence[str], *, macro: bool) -> float:
    """scikit-learn's classification_report F1 (zero_division=0) over every label seen in gold or prediction: the
    macro average, or the average weighted by gold support. Deliberate: an invented label is one more class (its
    F1 of 0 lowers the macro average)."""
    true_count = Counter(gold)
    predicted_count = Counter(predicted)
    hits = Counter(g for g, p in zip(gold, predicted, strict=True) if g == p)
    labels = sorted(set(true_count) | set(predicted_count))
    scores = {}
    for label in labels:
        denominator = true_count[label] + predicted_count[label]
        scores[label] = 2 * hits[label] / denominator if denominator else 0.0
    if macro:
        return sum(scores.values()) / len(labels)
    total = sum(true_count.values())
    return sum(scores[label] * true_count[label] for label in labels) / total


def classification_label(task: Task, answer: str) -> str:
    # The official evaluator turns an empty prediction into the first label of its list for the task.
    return answer if answer != "" else task.empty_label


@cache
def _tokenizer():
    # BERT's BasicTokenizer, as the official evaluator: CJK characters split, lower-casing, accents stripped.
    from transformers import BasicTokenizer

    return BasicTokenizer(tokenize_chinese_chars=True)


@cache
def _rouge():
    from rouge_chinese import Rouge

    # Only ROUGE-L is reported; rouge-chinese computes each metric apart, so this gives the same figure.
    return Rouge(metrics=["rouge-l"])


def rouge_text(text: str) -> str:
    tokens = " ".join(_tokenizer().tokenize(text)).strip()
    return tokens if tokens else EMPTY_TEXT


def rouge_l_pairs(predictions: Sequence[str], references: Sequence[str]) -> list[float]:
    """The ROUGE-L F of each (prediction, reference) pair, on the texts as :func:`rouge_text` writes them."""
    scores = _rouge().get_scores(list(predictions), list(references))
    return [score["rouge-l"]["f"] for score in scores]


def mean_in_order(values: Sequence[float]) -> float:
    # rouge-chinese's avg=True sums from 0 in order then divides: same operations, same float.
    total = 0
    for value in values:
        total += value
    return total / len(values)


def generation_pairs(task: Task, gold, predicted) -> list[tuple[str, str]]:
    """MedDG: one (prediction, reference) pair. IMCS-V2-MRG: one per section of the gold report, pooled over
    samples (the official by-sessions function); a section the prediction lacks is empty."""
    if task.name == "MedDG":
        return [(rouge_text(predicted), rouge_text(gold))]
    return [
        (rouge_text(predicted.get(section, "").strip()), rouge_text(text.strip())) for section, text in gold.items()
    ]


def tree_sample(gold: list[dict], predicted: list[dict]) -> TreeCounts:
    return tree_counts(predicted, gold)


def task_figure(task: Task, stats: list) -> float:
    """The task's headline fraction from its samples' statistics (see :func:`sample_stats`)."""
    if task.kind == EXTRACTION:
        return micro_f1(stats)
    if task.kind == CLASSIFICATION:
        return classification_f1(
            [gold for gold, _ in stats], [pred for _, pred in stats], macro=task.headline_key.endswith("Macro-F1")
        )
    if task.kind == GENERATION:
        return mean_in_order([value for sample in stats for value in sample])
    return tree_edit_ratio(stats)


def sample_stats(task: Task, gold, predicted):
    """One sample's statistics for its task: (tp, fp, fn); (gold label, predicted label); the ROUGE-L F of each
    pair; or the tree's edit counts. Pooling them with :func:`task_figure` gives the official figure."""
    if task.kind == EXTRACTION:
        return extraction_counts(gold, predicted)
    if task.kind == CLASSIFICATION:
        return gold, classification_label(task, predicted)
    if task.kind == GENERATION:
        pairs = generation_pairs(task, gold, predicted)
        return tuple(rouge_l_pairs([p for p, _ in pairs], [r for _, r in pairs])) if pairs else ()
    return tree_sample(gold, predicted)


def overall(figures: dict[str, float]) -> float:
    """The official overall: the 18 figures summed in the official order, divided by 18 (a task with no sample
    scores 0 and still counts)."""
    total = 0.0
    for task in TASKS:
        total += figures.get(task.name, 0.0)
    return total / len(TASKS)


def official_report(figures: dict[str, float]) -> dict:
    """``{"score": …, "scoreJson": {…, "score": …}}`` as the official evaluate.py writes it, every value ×100."""
    score_json = {task.headline_key: figures.get(task.name, 0.0) * 100 for task in TASKS}
    score_json["score"] = overall(figures) * 100
    return {"score": score_json["score"], "scoreJson": score_json}


class ScoringError(ValueError):
    """Input the official scripts cannot score (they would fail); the message names the sample or the task."""


@dataclass(frozen=True)
class GoldSample:
    sample_id: str
    task: Task
    target: str
    answer_choices: list | None = None


@dataclass(frozen=True)
class SampleResult:
    """One sample as the scorer read it: both structures, the generated lines no template of the task matched,
    whether the official parser would have raised on the generated text, and the sample's statistics."""

    sample_id: str
    task: str
    gold: object
    prediction: object
    parse_misses: tuple[str, ...]
    official_parser_fails: bool
    stats: object


@dataclass(frozen=True)
class TaskResult:
    task: Task
    n: int
    figure: float  # a fraction; ×100 in the report
    parse_misses: int  # generated lines that matched no template
    samples_with_misses: int
    official_parser_fails: int  # samples on which the official parser would have raised


@dataclass(frozen=True)
class Scores:
    tasks: dict[str, TaskResult]  # the tasks with at least one gold sample, in the official order
    report: dict  # the official {"score", "scoreJson"} (×100); see present_tasks
    present_tasks: bool
    samples: list[SampleResult] | None = None


MUST_BE_PRESENT = (CLASSIFICATION, GENERATION, TREE)
# Samples between two calls of score()'s progress callback: often enough for a job's progress bar to move.
PROGRESS_EVERY = 500


def score(
    gold: Sequence[GoldSample],
    predictions: dict[str, str],
    *,
    present_tasks: bool = False,
    keep_samples: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Scores:
    """Score generated ``predictions`` (sample_id -> text) against ``gold``.

    The official overall counts all 18 tasks; an extraction task without gold scores 0 there, and a file without a
    classification, generation or Text2DT task is refused (the official code fails on it). With ``present_tasks``
    the overall is the mean over the tasks present in the gold instead (not comparable to the official figure; the
    report says so). ``keep_samples`` keeps a :class:`SampleResult` per sample (for pages that show why).
    ``progress(done, total)`` is called every :data:`PROGRESS_EVERY` samples and once the last is scored.
    """
    from .parsing import parse

    by_task: dict[str, list] = {}
    per_task_misses: Counter = Counter()
    per_task_missed_samples: Counter = Counter()
    per_task_fails: Counter = Counter()
    samples: list[SampleResult] | None = [] if keep_samples else None
    for done, sample in enumerate(gold, start=1):
        if sample.sample_id not in predictions:
            raise ScoringError(f"sample_id {sample.sample_id!r} ({sample.task.name}) has no prediction")
        task = sample.task
        gold_parsed = parse(task, sample.target, sample.answer_choices)
        if task.kind == CLASSIFICATION and gold_parsed.answer == "":
            raise ScoringError(f"sample_id {sample.sample_id!r} ({task.name}): the gold answer is empty")
        predicted = parse(task, predictions[sample.sample_id], sample.answer_choices)
        stats = sample_stats(task, gold_parsed.answer, predicted.answer)
        by_task.setdefault(task.name, []).append(stats)
        if predicted.misses:
            per_task_misses[task.name] += len(predicted.misses)
            per_task_missed_samples[task.name] += 1
        per_task_fails[task.name] += predicted.official_fails
        if samples is not None:
            samples.append(
                SampleResult(
                    sample.sample_id,
                    task.name,
                    gold_parsed.answer,
                    predicted.answer,
                    predicted.misses,
                    predicted.official_fails,
                    stats,
                )
            )
        if progress is not None and (done % PROGRESS_EVERY == 0 or done == len(gold)):
            progress(done, len(gold))
    if not present_tasks:
        absent = [t.name for t in TASKS if t.kind in MUST_BE_PRESENT and t.name not in by_task]
        if absent:
            raise ScoringError(
                f"the gold file has no sample of {', '.join(absent)}: the official overall cannot be computed "
                "without every classification, generation and Text2DT task (score the tasks present with "
                "--present-tasks, which is not comparable to the official overall)"
            )
    figures: dict[str, float] = {}
    results: dict[str, TaskResult] = {}
    for task in TASKS:
        if task.name not in by_task:
            continue
        stats = by_task[task.name]
        try:
            figures[task.name] = task_figure(task, stats)
        except ZeroDivisionError:
            raise ScoringError(
                f"{task.name}: nothing to score (no gold report section, or no triple in any tree): the official "
                "evaluation fails on it"
            ) from None
        results[task.name] = TaskResult(
            task,
            len(stats),
            figures[task.name],
            per_task_misses[task.name],
            per_task_missed_samples[task.name],
            per_task_fails[task.name],
        )
    report = official_report(figures) if not present_tasks else present_report(figures)
    return Scores(results, report, present_tasks, samples)


def present_report(figures: dict[str, float]) -> dict:
    """The tasks present only, their mean as "score", marked as not the official overall."""
    score_json = {task.headline_key: figures[task.name] * 100 for task in TASKS if task.name in figures}
    mean = 0.0
    for task in TASKS:
        if task.name in figures:
            mean += figures[task.name]
    score_json["score"] = mean / len(figures) * 100 if figures else 0.0
    return {
        "score": score_json["score"],
        "scoreJson": score_json,
        "present_tasks": [task.name for task in TASKS if task.name in figures],
        "comparable_to_official": False,
    }
