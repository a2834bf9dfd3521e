"""``span_score``: SHROOM's IoU and Spearman over files, per-item output, refusals; no database needed."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

REF = [
    # two hallucinated characters overlap the prediction's four: IoU 2 / 4
    {"id": "b", "model_output_text": "abcdef", "soft_labels": [{"start": 2, "end": 4, "prob": 1.0}]},
    # nobody marked anything and the detector neither: IoU 1, cor 1
    {"id": "a", "model_output_text": "清热解毒", "soft_labels": [], "hard_labels": []},
]
PRED = [
    {"id": "a", "soft_labels": []},
    {"id": "b", "soft_labels": [{"start": 2, "end": 6, "prob": 0.8}], "hard_labels": [[2, 6]]},
]


def write(tmp_path, name, records):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return str(path)


def run(*args):
    buf = io.StringIO()
    call_command("span_score", *args, stdout=buf)
    return buf.getvalue()


def test_scores_and_per_item_file(tmp_path):
    ref, pred = write(tmp_path, "ref.jsonl", REF), write(tmp_path, "pred.jsonl", PRED)
    per_item = tmp_path / "items.jsonl"
    out = json.loads(run(ref, pred, "--json", "--per-item", str(per_item), "--resamples", "100"))
    # b: vectors [0,0,1,1,0,0] and [0,0,.8,.8,.8,.8]: ranks [2.5,2.5,5.5,5.5,2.5,2.5] and [1.5,1.5,4.5,4.5,4.5,4.5],
    # deviations [-1,-1,2,2,-1,-1] and [-2,-2,1,1,1,1]: rho = 6 / sqrt(12 * 12) = 0.5; a: both constant -> 1.0
    assert out["n"] == 2
    assert out["iou"] == pytest.approx((0.5 + 1.0) / 2)
    assert out["cor"] == pytest.approx((0.5 + 1.0) / 2)
    rows = [json.loads(line) for line in per_item.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"]
    assert rows[1]["iou"] == 0.5
    assert "IoU of hard labels" in run(ref, pred)


def test_bad_files_are_refused_naming_file_line_and_field(tmp_path):
    ref = write(tmp_path, "ref.jsonl", REF)
    bad = write(tmp_path, "pred.jsonl", [PRED[0], {"id": "b", "soft_labels": [{"start": 2, "end": 60, "prob": 1}]}])
    with pytest.raises(CommandError, match=r"pred\.jsonl, line 2, field 'soft_labels \(entry 1\)'"):
        run(ref, bad)
    missing = write(tmp_path, "short.jsonl", [PRED[0]])
    with pytest.raises(CommandError, match="no prediction for 1 reference answer"):
        run(ref, missing)
    with pytest.raises(CommandError, match="no such file|cannot be read"):
        run(ref, str(tmp_path / "nope.jsonl"))


def test_a_detector_file_with_hard_labels_only_is_scored_as_the_official_scorer_does(tmp_path):
    """The official Mu-SHROOM scorer (Helsinki-NLP/mu-shroom, participant_kit/scorer.py, load_jsonl_file_to_records
    with is_ref=False) accepts predictions without soft_labels and infers them, each hard span at probability 1
    (infer_soft_labels). It was refused here ("field 'soft_labels': is missing")."""
    ref = write(tmp_path, "ref.jsonl", REF)
    pred = write(tmp_path, "pred.jsonl", [{"id": "a", "hard_labels": []}, {"id": "b", "hard_labels": [[2, 6]]}])
    out = json.loads(run(ref, pred, "--json", "--resamples", "100"))
    # b: soft labels inferred as [2, 6) at 1.0, the vector [0,0,1,1,1,1]: the same ranks as PRED's 0.8, rho 0.5;
    # IoU 2 / 4. a: nothing marked on either side: 1 and 1.
    assert out["iou"] == 0.75 and out["cor"] == pytest.approx(0.75, abs=1e-12) and out["n"] == 2
    neither = write(tmp_path, "neither.jsonl", [{"id": "a"}, {"id": "b", "hard_labels": [[2, 6]]}])
    with pytest.raises(CommandError, match=r"neither\.jsonl, line 1, field 'soft_labels': is missing, and so is"):
        run(ref, neither)
