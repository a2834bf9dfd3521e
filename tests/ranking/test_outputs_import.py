"""System outputs: harness folders and JSONL, matching by content, all-or-nothing, idempotent, clear errors."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import QAItem
from annotation.qa_types import CLINIQLINK_FILES, HARNESS_OUTPUT_FILES
from portal.importing import ImportProblem
from portal.models import AuditEntry
from ranking.models import System, SystemOutput
from ranking.services.outputs import outputs_import
from ranking.services.reference import reference_text

from .conftest import SAMPLE, write_jsonl

pytestmark = pytest.mark.django_db
TYPE_TO_DATASET = {qa_type: name for name, qa_type in CLINIQLINK_FILES.items()}


def harness_folder(tmp_path, respond=lambda record, i: f"response {i} to {record['question'][:20]}", name="out"):
    """Write the seven harness output files for the sample, the way submit.py does."""
    folder = tmp_path / name
    folder.mkdir()
    for file_name, qa_type in HARNESS_OUTPUT_FILES.items():
        records = json.loads((SAMPLE / TYPE_TO_DATASET[qa_type]).read_text())
        responses = [respond(r, i) for i, r in enumerate(records)]
        prompts = [f"PROMPT {r['question']}" for r in records]
        inputs = [{**r, "response": resp, "prompt": p} for r, resp, p in zip(records, responses, prompts, strict=True)]
        (folder / file_name).write_text(json.dumps({"inputs": inputs, "responses": responses, "prompts": prompts}))
    return folder


def test_harness_folder_imports_every_type_matched_by_content(sample_items, tmp_path):
    result = outputs_import(
        system_name="SYSNAME-ALPHA-7B", paths=[harness_folder(tmp_path)], family="alpha", parameter_count=7_000_000_000
    )
    assert result.created == 35 and result.updated == 0 and len(result.by_type) == 7
    system = System.objects.get(name="SYSNAME-ALPHA-7B")
    assert system.family == "alpha" and system.parameter_count == 7_000_000_000 and not system.is_reference
    tf = QAItem.objects.filter(qa_type="true_false").order_by("id").first()
    output = SystemOutput.objects.get(system=system, item=tf)
    assert output.response.startswith("response 0 to ") and output.prompt.startswith("PROMPT ")


def test_reimport_is_idempotent_and_a_changed_response_is_updated_and_audited(sample_items, tmp_path):
    folder = harness_folder(tmp_path)
    outputs_import(system_name="S1", paths=[folder])
    again = outputs_import(system_name="S1", paths=[folder])
    assert (again.created, again.updated, again.unchanged) == (0, 0, 35)
    assert not AuditEntry.objects.filter(action="output_changed").exists()
    changed = harness_folder(
        tmp_path, lambda r, i: "NEW" if i == 0 else f"response {i} to {r['question'][:20]}", "out2"
    )
    result = outputs_import(system_name="S1", paths=[changed])
    assert (result.created, result.updated, result.unchanged) == (0, 7, 28)  # record 1 of each of the 7 files
    entry = AuditEntry.objects.filter(action="output_changed").first()
    assert entry.after == {"response": "NEW"} and entry.before["response"].startswith("response 0")
    assert SystemOutput.objects.filter(response="NEW").count() == 7


def test_responses_are_flattened_like_the_scorer(sample_items, tmp_path):
    shapes = [
        ["part one", "part two"],
        {"generated_text": "from a pipeline"},
        [{"generated_text": "nested"}],
        {"text": "t"},
    ]
    folder = harness_folder(tmp_path, lambda r, i: shapes[i % len(shapes)])
    outputs_import(system_name="S1", paths=[folder])
    texts = set(SystemOutput.objects.values_list("response", flat=True))
    assert {"part one part two", "from a pipeline", "nested", "t"} <= texts
    raw = SystemOutput.objects.filter(response="from a pipeline").first().raw
    assert raw == {"generated_text": "from a pipeline"}


def test_fallback_match_by_question_and_paragraph(sample_items, tmp_path):
    records = json.loads((SAMPLE / "short.json").read_text())
    inputs = [{**r, "model_temperature": 0.0, "response": "x"} for r in records]  # extra key: a different uid
    (tmp_path / "short.json").write_text(json.dumps({"inputs": inputs, "responses": ["x"] * len(records)}))
    assert outputs_import(system_name="S1", paths=[tmp_path / "short.json"]).created == len(records)


def test_length_mismatch_is_refused(sample_items, tmp_path):
    folder = harness_folder(tmp_path)
    data = json.loads((folder / "short.json").read_text())
    data["responses"].pop()
    (folder / "short.json").write_text(json.dumps(data))
    with pytest.raises(ImportProblem, match=r"short.json, field 'responses': 5 inputs but 4 responses"):
        outputs_import(system_name="S1", paths=[folder])
    assert not SystemOutput.objects.exists() and not System.objects.exists()


def test_unknown_item_names_file_and_record_and_imports_nothing(sample_items, tmp_path):
    folder = harness_folder(tmp_path)
    data = json.loads((folder / "multi_hop.json").read_text())
    data["inputs"][3]["question"] = "A question nobody imported?"
    (folder / "multi_hop.json").write_text(json.dumps(data))
    with pytest.raises(ImportProblem) as info:
        outputs_import(system_name="S1", paths=[folder])
    assert info.value.file == "multi_hop.json" and info.value.record == 4
    assert "A question nobody imported?" in str(info.value)
    assert not SystemOutput.objects.exists()


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ('{"system": "S1", "response": "x"}', "item_uid", "missing"),
        ('{"item_uid": "UID", "system": "S1"}', "response", "missing"),
        ('{"item_uid": "UID", "system": "OTHER", "response": "x"}', "system", "not the system being imported"),
        ("{not json", None, "malformed JSON"),
        (
            '{"item_uid": "nope", "system": "S1", "response": "x"}',
            None,
            "no item in the portal matches item_uid 'nope'",
        ),
    ],
)
def test_bad_jsonl_lines_are_refused_with_file_record_field(sample_items, tmp_path, line, field, message):
    good = write_jsonl(tmp_path / "good.jsonl", "S1", sample_items[:3])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + line.replace("UID", sample_items[5].uid) + "\n")
    with pytest.raises(ImportProblem) as info:
        outputs_import(system_name="S1", paths=[good, bad])
    assert info.value.file == "bad.jsonl" and info.value.record == 4 and info.value.field == field
    assert message in str(info.value)
    assert not SystemOutput.objects.exists()


def test_duplicate_item_in_one_import_is_refused(sample_items, tmp_path):
    path = write_jsonl(tmp_path / "dup.jsonl", "S1", [sample_items[0], sample_items[0]])
    with pytest.raises(ImportProblem, match="record 2: the same item as record 1"):
        outputs_import(system_name="S1", paths=[path])


def test_reference_name_is_reserved(sample_items, tmp_path):
    with pytest.raises(ImportProblem, match="reserved"):
        outputs_import(system_name="reference", paths=[write_jsonl(tmp_path / "r.jsonl", "reference", sample_items)])


def test_command_imports_and_reports(sample_items, tmp_path, capsys):
    call_command(
        "import_outputs",
        str(harness_folder(tmp_path)),
        "--system",
        "S9",
        "--family",
        "fam",
        "--params",
        "9",
        "--no-progress",
    )
    assert "S9: 35 new, 0 changed, 0 unchanged" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_uid": "missing-uid", "response": "x"}\n')
    with pytest.raises(CommandError, match="nothing was imported.*bad.jsonl, record 1"):
        call_command("import_outputs", str(bad), "--system", "S9", "--no-progress")


def test_reference_text_for_every_type(sample_items):
    by_type = {item.qa_type: item for item in sample_items}
    assert reference_text(by_type["true_false"]) == by_type["true_false"].answer
    mc = by_type["multiple_choice"]
    assert reference_text(mc) in mc.options
    assert reference_text(by_type["list"]) == ", ".join(by_type["list"].answer_list)
    assert reference_text(by_type["short_answer"]) == by_type["short_answer"].answer
    assert reference_text(by_type["short_inverse"]) == by_type["short_inverse"].incorrect_explanation
    assert reference_text(by_type["multi_hop"]) == by_type["multi_hop"].answer
    mhi = by_type["multi_hop_inverse"]
    # The first line naming the explanation in any case, as the public scorer reads it: in the sample that is a
    # line before the "- Explanation:" one (fixtures/metric-reference, open_a_self, item 4 scores 1.0 with it).
    line = next(x for x in mhi.incorrect_reasoning_step if "explanation" in x.lower())
    assert reference_text(mhi) == line.split(":", 1)[-1].strip()
    mc.correct_answer = "B"
    assert reference_text(mc) == mc.options[1]
    generic = QAItem(qa_type="generic", answer="发热，咳嗽")
    assert reference_text(generic) == "发热，咳嗽"
    # Read as the scorer reads the gold: list letters name their options, "explanation" in any case.
    listed = QAItem(qa_type="list", options=["A. Iron", "B. Zinc", "C. Folate"], answer_list=["A", "C"])
    assert reference_text(listed) == "Iron, Folate"
    mhi.incorrect_reasoning_step = ["Step 2: wrong.", "explanation: too low"]
    assert reference_text(mhi) == "too low"
