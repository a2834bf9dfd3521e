"""PromptCBLUE at parity: scores and parsed structures against the official scripts' recorded outputs.

fixtures/promptcblue-reference/<case>/official.json, gold_structured.json and pred_structured.json were written by
the official post_generate_process.py and evaluate.py, run once (see that folder's README.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metrics.promptcblue import TASKS, GoldSample, score, task_named

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "promptcblue-reference"
CASES = ("quirks", "toy", "toy-self")


def load(case: str):
    folder = REFERENCE / case
    gold = [json.loads(line) for line in (folder / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
    samples = [
        GoldSample(g["sample_id"], task_named(g["task_dataset"]), g["target"], g["answer_choices"]) for g in gold
    ]
    predictions = {}
    for line in (folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        predictions[record["sample_id"]] = record["target"]
    return samples, predictions, folder


@pytest.mark.parametrize("case", CASES)
def test_every_figure_matches_the_official_evaluation(case):
    samples, predictions, folder = load(case)
    official = json.loads((folder / "official.json").read_text(encoding="utf-8"))
    report = score(samples, predictions).report
    assert list(report["scoreJson"]) == list(official["scoreJson"])
    for key, value in official["scoreJson"].items():
        assert report["scoreJson"][key] == pytest.approx(value, abs=1e-6), key
    assert report["score"] == pytest.approx(official["score"], abs=1e-6)


def _comparable(task: str, answer):
    if task == "CHIP-CDN":  # the official parser goes through set(): its order is arbitrary
        return sorted(json.dumps(item, ensure_ascii=False) for item in answer)
    return json.loads(json.dumps(answer, ensure_ascii=False))  # tuples of Text2DT triples as JSON lists


@pytest.mark.parametrize("case", CASES)
def test_every_parsed_structure_matches_the_official_parser(case):
    samples, predictions, folder = load(case)
    results = score(samples, predictions, keep_samples=True).samples
    for side, file in (("gold", "gold_structured.json"), ("prediction", "pred_structured.json")):
        official = json.loads((folder / file).read_text(encoding="utf-8"))
        assert set(official) == {task.name for task in TASKS}
        for task, rows in official.items():
            ours = [r for r in results if r.task == task]
            assert [r.sample_id for r in ours] == [row["sample_id"] for row in rows]
            for result, row in zip(ours, rows, strict=True):
                assert _comparable(task, getattr(result, side)) == _comparable(task, row["answer"]), (
                    side,
                    result.sample_id,
                )


def test_the_quirk_case_exercises_every_task_and_is_not_trivially_perfect():
    samples, predictions, folder = load("quirks")
    official = json.loads((folder / "official.json").read_text(encoding="utf-8"))["scoreJson"]
    assert {s.task.name for s in samples} == {t.name for t in TASKS}
    assert all(0 < value < 100 for key, value in official.items())


def test_samples_are_kept_only_when_asked():
    samples, predictions, _ = load("quirks")
    assert score(samples, predictions).samples is None
    kept = score(samples, predictions, keep_samples=True).samples
    assert len(kept) == len(samples)
