"""One hostile multi-hop-inverse answer: the item is dropped exactly as the public scorer drops it, and the work
any single answer can cause is bounded (docs/metric.md §5.6)."""

from __future__ import annotations

import io
import json
import shutil
import tracemalloc

import pytest

from metrics import load_submission_dir, score_submission
from metrics.cli import score_folders
from metrics.open_ended import multi_hop_inverse_item
from metrics.semantic import MAX_STEP_DISTANCE, step_penalty

GOLD = {
    "question": "q",
    "incorrect_reasoning_step": ["- Step 3 contains the incorrect inference", "- Explanation: the real reason"],
    "source": {"paragraph_id": "p1"},
}


def _answer(step: str) -> str:
    return f"Incorrect Reasoning Step: Step {step}\nIncorrect Reasoning Explanation: the real reason"


def test_penalty_is_the_public_formula_up_to_where_the_public_code_overflows():
    assert step_penalty(MAX_STEP_DISTANCE) == 0.3 / (2 ** (MAX_STEP_DISTANCE - 2))
    # What the public code computes one step further: the integer power no longer converts to a float.
    with pytest.raises(OverflowError):
        0.3 / (2 ** (MAX_STEP_DISTANCE + 1 - 2))
    with pytest.raises(OverflowError):
        step_penalty(MAX_STEP_DISTANCE + 1)


@pytest.mark.parametrize("step", ["2030", "12345678901", "9" * 5000])
def test_a_hostile_step_number_drops_the_item_quickly_and_cheaply(step):
    tracemalloc.start()
    try:
        item = multi_hop_inverse_item(0, GOLD, _answer(step))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert item.error and item.error.startswith("item 1 dropped")
    assert item.predicted_step is None and item.expected_step is None
    assert peak < 1_000_000  # building 2 ** (10 ** 10) alone takes 1.25 GB


def test_a_step_at_the_largest_distance_is_still_scored():
    item = multi_hop_inverse_item(0, GOLD, _answer(str(3 + MAX_STEP_DISTANCE)))
    assert item.error is None and item.step_distance == MAX_STEP_DISTANCE and item.penalty > 0


def _reference(rows, folder, index):
    return rows[(folder, "multi_hop_inverse", index)]


def test_parity_items_dropped_from_the_type_as_the_public_scorer_drops_them(
    reference_dir, encoder, text_metrics, expected_rows
):
    """Items 1 and 3 name steps 2030 and 12345678901: the public scorer's ``0.3 / (2 ** (d - 2))`` raises
    OverflowError, its per-item ``except`` drops them, and the type's mean, step rate and BLEU/ROUGE/METEOR
    averages are those of the three other items (item 2 from the exact-step folder, items 4 and 5 from the
    distance-3 folder, whose reference scores are known)."""
    sub = load_submission_dir(reference_dir / "open_step_d0_exact")
    d3 = load_submission_dir(reference_dir / "open_step_d3_exact").responses["multi_hop_inverse"]
    responses = {**sub.responses, "multi_hop_inverse": list(sub.responses["multi_hop_inverse"])}
    mhi = responses["multi_hop_inverse"]
    mhi[0] = mhi[0].replace("Step 3", "Step 2030", 1)
    mhi[2] = mhi[2].replace("Step 5", "Step 12345678901", 1)
    mhi[3], mhi[4] = d3[3], d3[4]
    result = score_submission(sub.inputs, responses, encoder=encoder, text_metrics=text_metrics)

    kept = [
        _reference(expected_rows, "open_step_d0_exact", 1),
        _reference(expected_rows, "open_step_d3_exact", 3),
        _reference(expected_rows, "open_step_d3_exact", 4),
    ]
    summary = result.summary
    want = sum(r["semantic"] for r in kept) / 3
    assert summary["multi_hop_inverse_semantic_match_score"] == pytest.approx(want, abs=1e-4)
    assert summary["multi_hop_inverse_step_identification_rate"] == pytest.approx(1 / 3)
    averages = summary["open_ended_metrics_per_type"]["multi_hop_inverse"]
    for metric in ("bleu", "rouge") + (("meteor",) if text_metrics.status["meteor"].available else ()):
        assert averages[f"avg_{metric}"] == pytest.approx(sum(r[metric] for r in kept) / 3, abs=1e-9)
    assert summary["open_ended_stats"]["multi_hop_inverse"]["min"] == pytest.approx(0.15, abs=1e-4)
    rows = {r["index"]: r for r in result.item_rows() if r["qa_type"] == "multi_hop_inverse"}
    assert rows[0]["semantic"] is None and rows[2]["semantic"] is None and rows[2]["predicted_step"] is None
    assert rows[1]["semantic"] == pytest.approx(kept[0]["semantic"], abs=1e-4)
    record = result.per_type["multi_hop_inverse"].items[0]
    assert record["skipped"] and record["step_correct"] is None and record["unpenalised_semantic"] is None
    dropped = [n for n in result.notes if "dropped" in n]
    assert [n.split(":")[0] for n in dropped] == ["multi_hop_inverse"] * 2
    assert "item 1 dropped" in dropped[0] and "item 3 dropped" in dropped[1]


def test_score_outputs_scores_every_folder_when_one_answer_is_hostile(
    tmp_path, reference_dir, encoder, nltk_dir, monkeypatch
):
    monkeypatch.setattr("metrics.encoder.Encoder", lambda *a, **k: encoder)  # reuse the session model
    hostile = tmp_path / "hostile"
    shutil.copytree(reference_dir / "open_step_d0_exact", hostile)
    path = hostile / "multi_hop_inverse.json"
    data = json.loads(path.read_text())
    data["responses"][0] = data["responses"][0].replace("Step 3", "Step 2030", 1)
    path.write_text(json.dumps(data))
    out, err = io.StringIO(), io.StringIO()
    folders = [str(hostile), str(reference_dir / "open_step_d1_exact")]
    code = score_folders(folders, as_json=True, nltk_data=str(nltk_dir), stdout=out, stderr=err, progress=False)
    assert code == 0, err.getvalue()
    result = json.loads(out.getvalue())
    assert result["hostile"]["multi_hop_inverse_semantic_match_score"] == pytest.approx(1.0, abs=1e-4)
    assert result["open_step_d1_exact"]["multi_hop_inverse_semantic_match_score"] == pytest.approx(0.7)
    assert "note: hostile: multi_hop_inverse: item 1 dropped" in err.getvalue()
