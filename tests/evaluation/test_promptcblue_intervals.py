"""PromptCBLUE bootstrap intervals: per task, and the overall stratified by task; no database needed.

The overall's resamples are checked by hand: each task's resample written out as a list of samples (from the
count vectors of its seed), scored with task_figure, summed and divided as the report divides.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evaluation.promptcblue import overall_resamples, score_files, score_intervals, task_resamples, task_seed
from metrics.promptcblue import TASKS, TASKS_BY_NAME, GoldSample, SampleResult, Scores, TaskResult, score
from metrics.promptcblue.scoring import task_figure
from metrics.promptcblue.text2dt import TreeCounts
from stats.bootstrap import clear_cache, resample_counts

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "promptcblue-reference"
RESAMPLES = 200
SEED = 7


@pytest.fixture(scope="module")
def quirks():
    folder = REFERENCE / "quirks"
    return score_files(folder / "gold.jsonl", folder / "predictions.jsonl", keep_samples=True).scores


@pytest.fixture(scope="module")
def three_tasks():
    """The quirk case's CHIP-STS (5 samples), MedDG (4) and first Text2DT sample, scored as the tasks present."""
    folder = REFERENCE / "quirks"
    records = [json.loads(line) for line in (folder / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
    chosen = [r for r in records if r["task_dataset"] in ("CHIP-STS", "MedDG")]
    chosen.append(next(r for r in records if r["task_dataset"] == "Text2DT"))
    gold = [
        GoldSample(r["sample_id"], TASKS_BY_NAME[r["task_dataset"]], r["target"], r["answer_choices"]) for r in chosen
    ]
    predictions = {}
    for line in (folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        predictions[record["sample_id"]] = record["target"]
    return score(gold, {g.sample_id: predictions[g.sample_id] for g in gold}, present_tasks=True, keep_samples=True)


def overall_by_hand(scores, resample: int, divisor: int) -> float:
    """Resample ``resample`` of the overall, each task's samples written out from its own seed's count vector."""
    total = 0.0
    for index, task in enumerate(TASKS):
        stats = [s.stats for s in scores.samples if s.task == task.name]
        if not stats:
            continue
        row = resample_counts(len(stats), RESAMPLES, task_seed(SEED, index))[resample].astype(int)
        total += task_figure(task, [stats[i] for i in np.repeat(np.arange(len(stats)), row)])
    return total / divisor


def test_every_interval_contains_its_estimate_and_lies_in_0_1(quirks):
    intervals = score_intervals(quirks, n_resamples=RESAMPLES, seed=SEED)
    assert list(intervals["tasks"]) == [task.name for task in TASKS]
    for name, interval in intervals["tasks"].items():
        low, high = interval
        assert 0 <= low <= quirks.tasks[name].figure <= high <= 1, name
    low, high = intervals["overall"]
    assert low <= quirks.report["score"] / 100 <= high
    assert low < high
    assert (intervals["n_resamples"], intervals["seed"]) == (RESAMPLES, SEED)
    assert "stratified" in intervals["method"] and "18" in intervals["method"]
    json.dumps(intervals)


def test_intervals_are_the_same_for_a_seed_and_differ_for_another(quirks):
    first = score_intervals(quirks, n_resamples=RESAMPLES, seed=SEED)
    clear_cache()  # drawn again, not read back from the cached count matrices
    assert score_intervals(quirks, n_resamples=RESAMPLES, seed=SEED) == first
    assert score_intervals(quirks, n_resamples=RESAMPLES, seed=SEED + 1)["overall"] != first["overall"]


def test_the_tasks_resample_apart(quirks):
    # CMeIE-V2, IMCS-V2-NER, CHIP-MDCFNPC and IMCS-V2-SR have two samples each: one seed for all would draw the
    # very same resamples for the four.
    two = [task for task in TASKS if quirks.tasks[task.name].n == 2]
    assert len(two) >= 2
    rows = [resample_counts(2, RESAMPLES, task_seed(SEED, TASKS.index(task))) for task in two]
    assert not np.array_equal(rows[0], rows[1])


def test_a_single_sample_task_has_no_interval_and_present_tasks_divide_by_their_number(three_tasks):
    assert [three_tasks.tasks[name].n for name in three_tasks.tasks] == [5, 4, 1]
    intervals = score_intervals(three_tasks, n_resamples=RESAMPLES, seed=SEED)
    assert intervals["tasks"]["Text2DT"] is None
    assert intervals["tasks"]["CHIP-STS"] is not None and intervals["tasks"]["MedDG"] is not None
    assert set(intervals["tasks"]) == {"CHIP-STS", "MedDG", "Text2DT"}
    low, high = intervals["overall"]
    assert low <= three_tasks.report["score"] / 100 <= high
    assert "the 3 tasks present" in intervals["method"]
    resampled = overall_resamples(three_tasks, task_resamples(three_tasks, n_resamples=RESAMPLES, seed=SEED))
    for b in (0, 17, 123):
        assert resampled[b] == pytest.approx(overall_by_hand(three_tasks, b, 3), abs=1e-12)


def test_the_overall_resamples_are_the_mean_of_the_tasks_resampled_figures(quirks):
    resampled = overall_resamples(quirks, task_resamples(quirks, n_resamples=RESAMPLES, seed=SEED))
    assert resampled.shape == (RESAMPLES,)
    for b in (0, 42):
        assert resampled[b] == pytest.approx(overall_by_hand(quirks, b, len(TASKS)), abs=1e-12)
    # the interval is the percentile interval of those resamples (widened to the estimate where needed)
    estimate = quirks.report["score"] / 100
    low, high = np.percentile(resampled, [2.5, 97.5])
    assert score_intervals(quirks, n_resamples=RESAMPLES, seed=SEED)["overall"] == pytest.approx(
        (min(low, estimate), max(high, estimate)), abs=1e-12
    )


def test_an_absent_task_adds_0_to_the_official_overall(three_tasks):
    # The same three tasks, the overall read as the official one (a sum over 18).
    official = type(three_tasks)(three_tasks.tasks, three_tasks.report, False, three_tasks.samples)
    resampled = overall_resamples(official, task_resamples(official, n_resamples=RESAMPLES, seed=SEED))
    assert resampled[5] == pytest.approx(overall_by_hand(three_tasks, 5, 18), abs=1e-12)


def text2dt_scores(trees: list[TreeCounts], figure: float) -> Scores:
    """Text2DT alone, scored as the task present, from its samples' edit counts and the figure given."""
    task = TASKS_BY_NAME["Text2DT"]
    samples = [SampleResult(f"t{i}", task.name, None, None, (), False, tree) for i, tree in enumerate(trees)]
    return Scores({task.name: TaskResult(task, len(trees), figure, 0, 0, 0)}, {}, True, samples)


def test_undefined_resamples_are_left_out():
    # One tree with no triple on either side: a resample drawing only it has no figure.
    scores = text2dt_scores([TreeCounts(0, 0), TreeCounts(3, 12)], 0.75)
    figures = task_resamples(scores, n_resamples=RESAMPLES, seed=SEED)["Text2DT"]
    assert np.isnan(figures).any() and np.isfinite(figures).any()
    # every defined resample holds the second tree, whose ratio is 0.75 whatever else is drawn
    intervals = score_intervals(scores, n_resamples=RESAMPLES, seed=SEED)
    assert intervals["tasks"]["Text2DT"] == pytest.approx((0.75, 0.75))
    assert intervals["overall"] == pytest.approx((0.75, 0.75))


def test_intervals_need_the_samples():
    folder = REFERENCE / "toy"
    scores = score_files(folder / "gold.jsonl", folder / "predictions.jsonl").scores
    with pytest.raises(ValueError, match="keep_samples"):
        score_intervals(scores)


def test_an_interval_is_widened_to_its_estimate():
    # Every resample scores exactly 0.75; an estimate a float's noise away (a sum added in another order) must
    # still lie in its interval.
    estimate = 0.75 + 2e-16
    scores = text2dt_scores([TreeCounts(1, 4), TreeCounts(2, 8), TreeCounts(3, 12)], estimate)
    assert set(task_resamples(scores, n_resamples=RESAMPLES, seed=SEED)["Text2DT"]) == {0.75}
    intervals = score_intervals(scores, n_resamples=RESAMPLES, seed=SEED)
    assert intervals["tasks"]["Text2DT"] == (0.75, estimate)
    assert intervals["overall"] == (0.75, estimate)
