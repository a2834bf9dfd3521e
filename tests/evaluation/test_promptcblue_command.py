"""``score_promptcblue``: the official report from files, the table, and every refusal; no database needed."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "promptcblue-reference"


def run(*args) -> str:
    buf = io.StringIO()
    call_command("score_promptcblue", *map(str, args), stdout=buf)
    return buf.getvalue()


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("case", ["quirks", "toy"])
def test_json_is_the_official_report(case):
    folder = REFERENCE / case
    official = json.loads((folder / "official.json").read_text(encoding="utf-8"))
    out = run(folder / "gold.jsonl", folder / "predictions.jsonl", "--json")
    report = json.loads(out)
    assert set(report) == {"score", "scoreJson"}
    assert list(report["scoreJson"]) == list(official["scoreJson"])
    for key, value in official["scoreJson"].items():
        assert report["scoreJson"][key] == pytest.approx(value, abs=1e-6)
    assert report["score"] == pytest.approx(official["score"], abs=1e-6)


def test_table_names_each_task_and_the_overall():
    folder = REFERENCE / "quirks"
    out = run(folder / "gold.jsonl", folder / "predictions.jsonl")
    official = json.loads((folder / "official.json").read_text(encoding="utf-8"))
    assert f"{official['score']:.4f}" in out
    row = next(line for line in out.splitlines() if line.startswith("CHIP-CDN "))
    # 4 samples; 4 unread lines in 3 of them (see the quirk case's CDN predictions)
    assert row.split()[1:4] == ["Micro-F1", f"{official['scoreJson']['CHIP-CDN-Micro-F1']:.2f}", "4"]
    assert "4 in 3 samples" in row


def test_present_tasks_averages_the_tasks_in_the_file(tmp_path):
    gold = write(
        tmp_path,
        "gold.jsonl",
        [
            json.dumps({"sample_id": "a", "task_dataset": "KUAKE-IR", "target": "相关", "answer_choices": None}),
            json.dumps({"sample_id": "b", "task_dataset": "CHIP-STS", "target": "是的", "answer_choices": None}),
        ],
    )
    pred = write(
        tmp_path, "pred.jsonl", ['{"sample_id": "b", "target": "不同"}', '{"sample_id": "a", "target": "相关"}']
    )
    with pytest.raises(CommandError, match="no sample of IMCS-V2-DAC"):
        run(gold, pred, "--json")
    report = json.loads(run(gold, pred, "--json", "--present-tasks"))
    # KUAKE-IR right (100), CHIP-STS wrong (0): mean 50 over the two tasks present.
    assert report["scoreJson"] == {"CHIP-STS-Micro-F1": 0.0, "KUAKE-IR-Micro-F1": 100.0, "score": 50.0}
    assert report["comparable_to_official"] is False
    assert "not comparable" in run(gold, pred, "--present-tasks")


def _bad_inputs(tmp_path):
    gold_lines = lines_of(REFERENCE / "quirks" / "gold.jsonl")
    pred_lines = lines_of(REFERENCE / "quirks" / "predictions.jsonl")
    first_id = json.loads(gold_lines[0])["sample_id"]
    first_pred_id = json.loads(pred_lines[0])["sample_id"]
    no_dac = [line for line in gold_lines if '"IMCS-V2-DAC"' not in line]
    dac_ids = {json.loads(line)["sample_id"] for line in gold_lines if '"IMCS-V2-DAC"' in line}
    return {
        "gold not json": (gold_lines[:2] + ["{not json"] + gold_lines[2:], pred_lines, r"gold.jsonl, line 3: not valid JSON"),
        "duplicate gold": (gold_lines + [gold_lines[0]], pred_lines, rf"gold.jsonl, line {len(gold_lines) + 1}: sample_id '{first_id}' is also on line 1"),
        "duplicate prediction": (gold_lines, pred_lines + [pred_lines[0]], rf"pred.jsonl, line {len(pred_lines) + 1}: sample_id '{first_pred_id}' is also on line 1"),
        "unknown prediction": (gold_lines, pred_lines + ['{"sample_id": "nope", "target": ""}'], rf"pred.jsonl, line {len(pred_lines) + 1}: sample_id 'nope' is not in the gold file"),
        "missing prediction": (gold_lines, [p for p in pred_lines if json.loads(p)["sample_id"] != first_id], rf"pred.jsonl: no prediction for sample_id '{first_id}' \(CMeEE-V2\)"),
        "missing task": (no_dac, [p for p in pred_lines if json.loads(p)["sample_id"] not in dac_ids], r"gold.jsonl: the gold file has no sample of IMCS-V2-DAC"),
        "unknown task": ([gold_lines[0].replace('"CMeEE-V2"', '"demo"')] + gold_lines[1:], pred_lines, r"gold.jsonl, line 1, field 'task_dataset': 'demo' is not a PromptCBLUE task"),
        "target not text": (gold_lines, [json.dumps({"sample_id": first_pred_id, "target": 3})] + pred_lines[1:], r"pred.jsonl, line 1, field 'target': must be a string"),
    }  # fmt: skip


@pytest.mark.parametrize(
    "name",
    [
        "gold not json",
        "duplicate gold",
        "duplicate prediction",
        "unknown prediction",
        "missing prediction",
        "missing task",
        "unknown task",
        "target not text",
    ],
)
def test_refusals_name_file_line_and_sample(tmp_path, name):
    gold_lines, pred_lines, message = _bad_inputs(tmp_path)[name]
    gold = write(tmp_path, "gold.jsonl", gold_lines)
    pred = write(tmp_path, "pred.jsonl", pred_lines)
    buf = io.StringIO()
    with pytest.raises(CommandError, match=message):
        call_command("score_promptcblue", str(gold), str(pred), "--json", stdout=buf)
    assert buf.getvalue() == ""  # nothing half-scored


def test_the_official_toy_file_is_read_with_its_old_cmeie_name():
    folder = REFERENCE / "toy"
    assert any('"task_dataset": "CMeIE"' in line for line in lines_of(folder / "gold.jsonl"))
    report = json.loads(run(folder / "gold.jsonl", folder / "predictions.jsonl", "--json"))
    official = json.loads((folder / "official.json").read_text(encoding="utf-8"))
    assert report["scoreJson"]["CMeIE-V2-Micro-F1"] == pytest.approx(official["scoreJson"]["CMeIE-V2-Micro-F1"])
