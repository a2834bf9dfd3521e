"""PromptCBLUE predictions as a system's outputs: matched by sample_id, targets kept to the character, the official
test_predictions.json (JSON Lines under a .json name) read as JSONL, all-or-nothing, idempotent, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.services.imports import items_import
from portal.importing import ImportProblem
from portal.models import AuditEntry
from ranking.models import System, SystemOutput
from ranking.services.outputs import outputs_import

from .conftest import ROOT

pytestmark = pytest.mark.django_db
TOY = ROOT / "fixtures" / "promptcblue-reference" / "toy"
GOLD, PREDICTIONS = TOY / "gold.jsonl", TOY / "predictions.jsonl"
# Whitespace the official parser would see; any stripping or re-spacing changes at least one of these.
EDGE_TARGETS = ["\n  诊断：消化不良。\n", " 非上述类型 ", "\n\n", "a\r\nb\t", "  \u3000全角空格\u3000"]


def read_jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def stored(system: str) -> dict[str, SystemOutput]:
    """The system's outputs by item uid."""
    return {o.item.uid: o for o in SystemOutput.objects.filter(system__name=system).select_related("item")}


@pytest.fixture
def pcb_items():
    items_import(paths=[GOLD], fmt="promptcblue")
    return read_jsonl(GOLD)


def assert_verbatim(system: str, predictions: list[dict]) -> None:
    outputs = stored(system)
    assert len(outputs) == len(predictions)
    for record in predictions:
        output = outputs[f"pcb-{record['sample_id']}"]
        assert output.response == record["target"] and output.raw == record["target"]


def test_official_predictions_store_each_target_byte_for_byte(pcb_items):
    predictions = read_jsonl(PREDICTIONS)
    # The fixture holds the cases this guards: empty targets and multi-line ones.
    assert any(r["target"] == "" for r in predictions) and any("\n" in r["target"] for r in predictions)
    result = outputs_import(system_name="PCB-MODEL", paths=[PREDICTIONS])
    assert (result.created, result.updated, result.unchanged) == (len(predictions), 0, 0)
    assert result.by_type == {"generic": len(predictions)}
    assert_verbatim("PCB-MODEL", predictions)


def test_leading_and_trailing_whitespace_and_newlines_are_kept(pcb_items, tmp_path):
    predictions = [
        {"sample_id": item["sample_id"], "target": target}
        for item, target in zip(pcb_items, EDGE_TARGETS, strict=False)
    ]
    assert all(p["target"] != p["target"].strip() or "\r" in p["target"] for p in predictions)
    outputs_import(system_name="PCB-MODEL", paths=[write_jsonl(tmp_path / "edge.jsonl", predictions)])
    assert_verbatim("PCB-MODEL", predictions)


def test_test_predictions_json_is_read_as_json_lines(pcb_items, tmp_path):
    renamed = tmp_path / "test_predictions.json"
    renamed.write_bytes(PREDICTIONS.read_bytes())
    result = outputs_import(system_name="PCB-MODEL", paths=[renamed])
    assert result.created == len(pcb_items) and result.files == ["test_predictions.json"]
    assert_verbatim("PCB-MODEL", read_jsonl(PREDICTIONS))


def test_whole_records_with_input_and_choices_are_read_for_sample_id_and_target_only(pcb_items, tmp_path):
    targets = {r["sample_id"]: r["target"] for r in read_jsonl(PREDICTIONS)}
    records = [{**item, "target": targets[item["sample_id"]]} for item in pcb_items]  # input, task_type … kept
    assert any(r["target"] != item["target"] for r, item in zip(records, pcb_items, strict=True))
    outputs_import(system_name="PCB-MODEL", paths=[write_jsonl(tmp_path / "test_predictions.json", records)])
    assert_verbatim("PCB-MODEL", [{"sample_id": r["sample_id"], "target": r["target"]} for r in records])


def test_a_numeric_sample_id_matches_as_the_importer_spells_it(db, tmp_path):
    gold = {"input": "问题", "target": "答案", "answer_choices": None, "task_type": "t", "task_dataset": "d"}
    items_import(paths=[write_jsonl(tmp_path / "gold.jsonl", [{**gold, "sample_id": 42}])], fmt="promptcblue")
    outputs_import(system_name="S", paths=[write_jsonl(tmp_path / "p.jsonl", [{"sample_id": 42, "target": "x"}])])
    assert stored("S")["pcb-42"].response == "x"


@pytest.mark.parametrize(
    "content",
    [
        '{"sample_id": "dev-83507", "target": "x"}\n',  # one object on one line: a document, not JSON Lines
        '{\n  "sample_id": "dev-83507",\n  "target": "x"\n}\n',  # one object, pretty-printed
    ],
)
def test_a_single_json_object_file_still_goes_to_the_harness_reader(pcb_items, tmp_path, content):
    (tmp_path / "outputs.json").write_text(content)
    with pytest.raises(ImportProblem) as info:
        outputs_import(system_name="S", paths=[tmp_path / "outputs.json"])
    assert info.value.field == "inputs" and "missing or not a list" in str(info.value)


def test_a_harness_file_name_is_never_read_as_json_lines(pcb_items, tmp_path):
    path = tmp_path / "short.json"
    path.write_bytes(PREDICTIONS.read_bytes())
    with pytest.raises(ImportProblem, match="malformed JSON"):
        outputs_import(system_name="S", paths=[path])


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ('{"sample_id": "dev-2107"}', "target", "missing"),
        ('{"sample_id": "dev-2107", "target": 7}', "target", "must be a string, not a number"),
        ('{"sample_id": "dev-2107", "target": null}', "target", "must be a string, not null"),
        ('{"sample_id": "dev-404", "target": "x"}', "sample_id", "no item in the portal matches sample_id 'dev-404'"),
        ('{"sample_id": "dev-83507", "target": "again"}', "sample_id", "the same item as record 1"),
        ('{"target": "x"}', "item_uid", "missing, and so is sample_id"),
        ('{"sample_id": true, "target": "x"}', "sample_id", "must be a non-empty string or a whole number"),
        ('{"sample_id": "dev-2107", "target": "x"', None, "malformed JSON"),
    ],
)
def test_a_bad_line_is_named_and_nothing_is_imported(pcb_items, tmp_path, line, field, message):
    outputs_import(system_name="OTHER", paths=[PREDICTIONS])  # so that "nothing changed" is not an empty table
    before = SystemOutput.objects.count()
    good = PREDICTIONS.read_text(encoding="utf-8").splitlines(keepends=True)[:3]
    assert json.loads(good[0])["sample_id"] == "dev-83507"
    path = tmp_path / "test_predictions.json"
    path.write_text("".join(good) + line + "\n", encoding="utf-8")
    with pytest.raises(ImportProblem) as info:
        outputs_import(system_name="PCB-MODEL", paths=[path])
    assert (info.value.file, info.value.record, info.value.field) == ("test_predictions.json", 4, field)
    assert str(info.value).startswith("test_predictions.json, record 4") and message in str(info.value)
    assert SystemOutput.objects.count() == before and not System.objects.filter(name="PCB-MODEL").exists()


def test_reimport_is_idempotent_and_a_changed_target_is_updated_and_audited(pcb_items, tmp_path):
    predictions = read_jsonl(PREDICTIONS)
    outputs_import(system_name="PCB-MODEL", paths=[PREDICTIONS])
    again = outputs_import(system_name="PCB-MODEL", paths=[PREDICTIONS])
    assert (again.created, again.updated, again.unchanged) == (0, 0, len(predictions))
    assert not AuditEntry.objects.filter(action="output_changed").exists()
    # Only a trailing newline differs: for the official parser that is another response.
    changed = [dict(r) for r in predictions]
    changed[4]["target"] = predictions[4]["target"] + "\n"
    result = outputs_import(system_name="PCB-MODEL", paths=[write_jsonl(tmp_path / "v2.jsonl", changed)])
    assert (result.created, result.updated, result.unchanged) == (0, 1, len(predictions) - 1)
    entry = AuditEntry.objects.get(action="output_changed")
    assert entry.before == {"response": predictions[4]["target"]} and entry.after == {"response": changed[4]["target"]}
    assert_verbatim("PCB-MODEL", changed)
