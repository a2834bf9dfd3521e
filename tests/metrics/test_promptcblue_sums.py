"""PromptCBLUE per-sample scores, task figures as functions of column sums, and score()'s progress callback.

The vectorised statistics are checked against :func:`task_figure` itself: on the recorded cases' samples, and on
samples resampled explicitly (each resample's count vector expanded to a list of samples and scored as a list).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evaluation.promptcblue import score_files
from metrics.promptcblue import TASKS_BY_NAME, GoldSample, contributions, sample_score, score
from metrics.promptcblue.scoring import PROGRESS_EVERY, task_figure
from metrics.promptcblue.tasks import CLASSIFICATION, EXTRACTION, GENERATION, TASKS, TREE
from metrics.promptcblue.text2dt import TreeCounts
from stats.bootstrap import resample_counts

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "promptcblue-reference"
CASES = ("quirks", "toy")
KINDS = (EXTRACTION, CLASSIFICATION, GENERATION, TREE)
RESAMPLES = 40

MACRO = TASKS_BY_NAME["IMCS-V2-DAC"]  # headlined Macro-F1
WEIGHTED = TASKS_BY_NAME["CHIP-STS"]  # headlined Micro-F1, computed as the weighted average
MEDDG = TASKS_BY_NAME["MedDG"]
TEXT2DT = TASKS_BY_NAME["Text2DT"]
CMEEE = TASKS_BY_NAME["CMeEE-V2"]


@pytest.fixture(scope="module")
def stats_by_case() -> dict[str, dict[str, list]]:
    """case -> task name -> the samples' statistics, in the gold's order (as score() pools them)."""
    out: dict[str, dict[str, list]] = {}
    for case in CASES:
        folder = REFERENCE / case
        scores = score_files(folder / "gold.jsonl", folder / "predictions.jsonl", keep_samples=True).scores
        assert scores.samples is not None
        by_task: dict[str, list] = {}
        for sample in scores.samples:
            by_task.setdefault(sample.task, []).append(sample.stats)
        out[case] = by_task
    return out


def figure_or_nan(task, stats: list) -> float:
    # The official code divides by zero where a resample holds no ROUGE pair or no tree triple.
    try:
        return float(task_figure(task, stats))
    except ZeroDivisionError:
        return float("nan")


def explicitly_resampled(task, stats: list, counts: np.ndarray) -> np.ndarray:
    """task_figure on each resample written out as a list: sample i repeated counts[b, i] times."""
    figures = []
    for row in counts.astype(int):
        drawn = np.repeat(np.arange(len(stats)), row)
        figures.append(figure_or_nan(task, [stats[i] for i in drawn]))
    return np.array(figures)


def vectorised(task, stats: list, counts: np.ndarray) -> np.ndarray:
    matrix, statistic = contributions(task, stats)
    return statistic(counts @ matrix)


@pytest.mark.parametrize("case", CASES)
def test_the_statistic_of_all_sums_is_the_task_figure(case, stats_by_case):
    kinds = set()
    for task in TASKS:
        stats = stats_by_case[case][task.name]
        matrix, statistic = contributions(task, stats)
        assert matrix.shape[0] == len(stats)
        assert statistic(matrix.sum(0)[None])[0] == pytest.approx(task_figure(task, stats), abs=1e-12), task.name
        kinds.add(task.kind)
    assert kinds == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", CASES)
def test_a_resampled_figure_is_the_figure_of_the_resampled_samples(case, kind, stats_by_case):
    for index, task in enumerate(t for t in TASKS if t.kind == kind):
        stats = stats_by_case[case][task.name]
        counts = resample_counts(len(stats), RESAMPLES, seed=100 + index)
        expected = explicitly_resampled(task, stats, counts)
        assert np.isfinite(expected).any(), task.name
        np.testing.assert_allclose(vectorised(task, stats, counts), expected, rtol=0, atol=1e-12, err_msg=task.name)


@pytest.mark.parametrize("task", [MACRO, WEIGHTED], ids=["macro", "weighted"])
def test_classification_resamples_where_a_label_disappears(task):
    # Labels a and c occur once each: many resamples lose one of them, and the macro average must then count
    # only the labels left (as scikit-learn on the resampled lists).
    stats = [("a", "a"), ("b", "a"), ("c", "c"), ("b", "b"), ("b", "d")]
    counts = resample_counts(len(stats), 200, seed=5)
    all_labels = {label for pair in stats for label in pair}

    def labels_drawn(row: np.ndarray) -> set[str]:
        return {label for i in np.repeat(np.arange(len(stats)), row.astype(int)) for label in stats[i]}

    assert sum(labels_drawn(row) != all_labels for row in counts) > 20
    np.testing.assert_allclose(
        vectorised(task, stats, counts), explicitly_resampled(task, stats, counts), rtol=0, atol=1e-12
    )


def test_classification_by_hand():
    stats = [("a", "a"), ("b", "a"), ("c", "c")]
    # all three: F1 a = 2·1/(1+2), b = 0, c = 1; gold counts 1, 1, 1
    # c three times: only label c is seen, its F1 is 1
    # a once, (b, a) twice: F1 a = 2·1/(1+3) = 1/2, b = 0; gold counts 1, 2; c is not seen
    counts = np.array([[1.0, 1, 1], [0, 0, 3], [1, 2, 0]])
    assert vectorised(MACRO, stats, counts) == pytest.approx([5 / 9, 1.0, 1 / 4], abs=1e-15)
    assert vectorised(WEIGHTED, stats, counts) == pytest.approx([5 / 9, 1.0, 1 / 6], abs=1e-15)


def test_generation_and_text2dt_are_undefined_where_nothing_is_drawn_to_divide_by():
    generation = [(), (0.5, 0.7)]
    counts = np.array([[2.0, 0], [0, 2], [1, 1]])
    result = vectorised(MEDDG, generation, counts)
    assert np.isnan(result[0]) and result[1:] == pytest.approx([0.6, 0.6], abs=1e-15)
    trees = [TreeCounts(0, 0), TreeCounts(3, 12)]
    result = vectorised(TEXT2DT, trees, counts)
    assert np.isnan(result[0]) and result[1:] == pytest.approx([0.75, 0.75], abs=1e-15)


def test_extraction_by_hand():
    stats = [(0, 0, 0), (1, 1, 0), (2, 0, 2)]
    # nothing found: 0; tp 2 fp 2 fn 0: p 1/2, r 1, F1 2/3; tp 5 fp 1 fn 4: p 5/6, r 5/9, F1 2/3
    counts = np.array([[3.0, 0, 0], [1, 2, 0], [0, 1, 2]])
    assert vectorised(CMEEE, stats, counts) == pytest.approx([0.0, 2 / 3, 2 / 3], abs=1e-15)


@pytest.mark.parametrize(
    ("task", "stats", "expected"),
    [
        (CMEEE, (2, 1, 1), 4 / 6),
        (CMEEE, (0, 0, 0), 1.0),  # nothing to find and nothing claimed
        (CMEEE, (0, 2, 0), 0.0),
        (CMEEE, (0, 0, 3), 0.0),
        (MACRO, ("a", "a"), 1.0),
        (WEIGHTED, ("是的", "不是"), 0.0),
        (MEDDG, (0.5, 0.25), 0.375),
        (TASKS_BY_NAME["IMCS-V2-MRG"], (), None),  # a report without a gold section
        (TEXT2DT, TreeCounts(3, 12), 0.75),
        (TEXT2DT, TreeCounts(0, 0), None),
    ],
)
def test_sample_score_by_hand(task, stats, expected):
    got = sample_score(task, stats)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-15)


def _classification_gold(n: int) -> list[GoldSample]:
    record = json.loads((REFERENCE / "quirks" / "gold.jsonl").read_text(encoding="utf-8").splitlines()[21])
    assert record["task_dataset"] == "CHIP-STS"
    return [GoldSample(f"s{i}", WEIGHTED, record["target"], record["answer_choices"]) for i in range(n)]


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (2 * PROGRESS_EVERY + 1, [(500, 1001), (1000, 1001), (1001, 1001)]),
        (2 * PROGRESS_EVERY, [(500, 1000), (1000, 1000)]),
        (3, [(3, 3)]),
    ],
)
def test_progress_is_reported_every_500_samples_and_at_the_end(n, expected):
    assert PROGRESS_EVERY == 500
    gold = _classification_gold(n)
    calls: list[tuple[int, int]] = []
    score(gold, {g.sample_id: "是的" for g in gold}, present_tasks=True, progress=lambda *call: calls.append(call))
    assert calls == expected
