"""Item and passage imports: every sample file, field-level checks, bad input refused, idempotence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import ImportBatch, QAItem, SourcePassage
from annotation.qa_types import CLINIQLINK_FILES
from annotation.services.imports import items_import, sources_import
from portal.importing import ImportProblem

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_SAMPLE = ROOT / "fixtures" / "cliniqlink-sample"
SHARED_SAMPLE = ROOT.parent / "shared" / "data" / "cliniqlink-sample"
SAMPLES = [FIXTURE_SAMPLE] + ([SHARED_SAMPLE] if SHARED_SAMPLE.exists() else [])

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.parent.name)
@pytest.mark.parametrize("file_name", list(CLINIQLINK_FILES))
def test_every_sample_file_imports_with_its_fields(sample, file_name):
    records = json.loads((sample / file_name).read_text())
    result = items_import(paths=[sample / file_name])
    assert result.created == len(records) == 5
    items = list(QAItem.objects.order_by("id"))
    for record, item in zip(records, items, strict=True):
        assert item.qa_type == record["type"] == CLINIQLINK_FILES[file_name]
        assert item.question == record["question"]
        assert item.paragraph_id == record["source"]["paragraph_id"]
        assert item.isbn == record["source"]["isbn"]
        assert item.page == str(record["source"]["page"])
        assert item.raw == record
        match item.qa_type:
            case "true_false" | "short_answer":
                assert item.answer == record["answer"]
            case "multiple_choice":
                assert item.options == record["options"] and item.correct_answer == record["correct_answer"]
            case "list":
                assert item.options == record["options"] and item.answer_list == record["answer"]
            case "short_inverse":
                assert item.false_answer == record["false_answer"]
                assert item.incorrect_explanation == record["incorrect_explanation"]
            case "multi_hop":
                assert item.reasoning == record["reasoning"] and item.answer == record["answer"]
            case "multi_hop_inverse":
                assert item.reasoning == record["reasoning"]
                assert item.incorrect_reasoning_step == record["incorrect_reasoning_step"]


def test_folder_import_is_idempotent():
    first = items_import(paths=[FIXTURE_SAMPLE])
    assert first.created == 35 and first.existing == 0
    second = items_import(paths=[FIXTURE_SAMPLE])
    assert second.created == 0 and second.existing == 35 and second.batch_id is None
    assert QAItem.objects.count() == 35
    assert ImportBatch.objects.count() == 1


def _write(tmp_path: Path, name: str, payload) -> Path:
    path = tmp_path / name
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    return path


def _sample(name: str) -> list[dict]:
    return json.loads((FIXTURE_SAMPLE / name).read_text())


def _bad_cases():
    tf = _sample("TF.json")
    mc = _sample("MC.json")
    missing_field = [dict(tf[0]), {k: v for k, v in tf[1].items() if k != "answer"}]
    wrong_shape = [dict(mc[0], options="A, B, C, D")]
    unknown_type = [dict(tf[0], type="essay")]
    bad_source = [dict(tf[0], source={"isbn": "x"})]
    wrong_type_for_file = [dict(mc[0])]
    return [
        ("TF.json", '[{"question": "x",', "TF.json: malformed JSON", None, None),
        ("TF.json", missing_field, "TF.json, record 2, field 'answer': missing", 2, "answer"),
        ("MC.json", wrong_shape, "MC.json, record 1, field 'options'", 1, "options"),
        ("other.json", unknown_type, "other.json, record 1, field 'type': unknown type 'essay'", 1, "type"),
        ("TF.json", bad_source, "field 'source.paragraph_id'", 1, "source.paragraph_id"),
        ("TF.json", wrong_type_for_file, "TF.json, record 1, field 'type'", 1, "type"),
        ("TF.json", {"items": []}, "expected a JSON array", None, None),
    ]


@pytest.mark.parametrize("name,payload,message,record,field", _bad_cases())
def test_bad_input_is_refused_with_file_record_field_and_nothing_written(
    tmp_path, name, payload, message, record, field
):
    (tmp_path / "good").mkdir()
    good = _write(tmp_path / "good", "short.json", _sample("short.json"))
    bad = _write(tmp_path, name, payload)
    with pytest.raises(ImportProblem) as excinfo:
        items_import(paths=[good, bad])
    assert message in str(excinfo.value)
    assert (excinfo.value.record, excinfo.value.field) == (record, field)
    assert QAItem.objects.count() == 0 and ImportBatch.objects.count() == 0


def test_duplicate_uid_in_one_upload_is_refused(tmp_path):
    tf = _sample("TF.json")
    (tmp_path / "a").mkdir()
    first = _write(tmp_path / "a", "TF.json", tf)
    second = _write(tmp_path, "TF.json", [tf[2]])
    with pytest.raises(ImportProblem) as excinfo:
        items_import(paths=[first, second])
    assert "duplicate uid" in str(excinfo.value) and "record 3 of TF.json" in str(excinfo.value)
    assert QAItem.objects.count() == 0


def test_item_already_in_portal_is_recognised_not_duplicated(tmp_path):
    items_import(paths=[FIXTURE_SAMPLE / "TF.json"])
    tf = _sample("TF.json")
    mixed = _write(tmp_path, "TF.json", tf + [dict(tf[0], question="A new statement about astrocytes.")])
    result = items_import(paths=[mixed])
    assert (result.created, result.existing) == (1, 5)
    assert QAItem.objects.count() == 6


def test_nested_lists_are_flattened_one_level(tmp_path):
    tf = _sample("TF.json")
    path = _write(tmp_path, "TF.json", [tf[:2], tf[2:]])
    assert items_import(paths=[path]).created == 5


def test_promptcblue_chinese_text_round_trips_exactly():
    path = ROOT / "fixtures" / "promptcblue-sample.jsonl"
    result = items_import(paths=[path], fmt="promptcblue")
    assert result.created == 3
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in lines:
        item = QAItem.objects.get(uid=f"pcb-{record['sample_id']}")
        assert item.question == record["input"] and item.answer == record["target"]
        assert item.raw == record
        assert item.extra["task_dataset"] == record["task_dataset"]
    assert "咽痛" in QAItem.objects.get(uid="pcb-train-demo-0001").answer


def test_promptcblue_bad_line_names_record_and_field(tmp_path):
    path = _write(
        tmp_path, "bad.jsonl", '{"input": "问", "target": "答", "sample_id": "1"}\n{"target": "答", "sample_id": "2"}\n'
    )
    with pytest.raises(ImportProblem) as excinfo:
        items_import(paths=[path], fmt="promptcblue")
    assert str(excinfo.value) == "bad.jsonl, record 2, field 'input': missing"
    assert QAItem.objects.count() == 0


def test_sources_link_items_and_reimport_updates(tmp_path):
    items_import(paths=[FIXTURE_SAMPLE / "TF.json"])
    pid = _sample("TF.json")[0]["source"]["paragraph_id"]
    csv_path = _write(tmp_path, "p.csv", f"paragraph_id,isbn,page,text\n{pid},000,0,Astrocytes do not transport.\n")
    assert sources_import(paths=[csv_path])["items_linked"] == 1
    item = QAItem.objects.get(paragraph_id=pid)
    assert item.passage.text == "Astrocytes do not transport."
    json_path = _write(tmp_path, "p.json", [{"paragraph_id": pid, "text": "Updated text."}])
    result = sources_import(paths=[json_path])
    assert (result["created"], result["updated"]) == (0, 1)
    assert SourcePassage.objects.get(paragraph_id=pid).text == "Updated text."


def test_sources_bad_csv_refused(tmp_path):
    path = _write(tmp_path, "p.csv", "paragraph_id,text\np1,ok\np1,again\n")
    with pytest.raises(ImportProblem, match=r"p.csv, record 2, field 'paragraph_id': duplicate .* \(also record 1\)"):
        sources_import(paths=[path])
    assert SourcePassage.objects.count() == 0


def test_import_sources_command_refuses_a_missing_or_bad_file_and_changes_nothing(tmp_path):
    with pytest.raises(CommandError, match="absent.csv: no such file"):
        call_command("import_sources", str(tmp_path / "absent.csv"))
    path = _write(tmp_path, "p.csv", "paragraph_id,text\np1,ok\np1,again\n")
    with pytest.raises(
        CommandError, match=r"Import refused, nothing was imported. p.csv, record 2, field 'paragraph_id'"
    ):
        call_command("import_sources", str(path))
    assert SourcePassage.objects.count() == 0


def test_import_items_command_exits_non_zero_on_bad_input(tmp_path):
    path = _write(tmp_path, "TF.json", [{"type": "true_false"}])
    with pytest.raises(CommandError, match="nothing was imported.*record 1, field 'question'"):
        call_command("import_items", str(path), "--no-progress")
    call_command("import_items", str(FIXTURE_SAMPLE), "--no-progress")
    assert QAItem.objects.count() == 35


def test_upload_limits_are_enforced(tmp_path, settings):
    settings.PORTAL_UPLOAD_MAX_RECORDS = 3
    with pytest.raises(ImportProblem, match="limit is 3"):
        items_import(paths=[FIXTURE_SAMPLE / "TF.json"])
    settings.PORTAL_UPLOAD_MAX_RECORDS = 1000
    settings.PORTAL_UPLOAD_MAX_DEPTH = 2
    with pytest.raises(ImportProblem, match="nesting deeper than 2"):
        items_import(paths=[FIXTURE_SAMPLE / "TF.json"])
