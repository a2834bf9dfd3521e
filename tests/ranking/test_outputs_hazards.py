"""System outputs: hostile values (NaN, 1e400, a key given twice, ...), values of the wrong JSON type and responses
that are not text are refused naming file, record (from 1) and field, and nothing is stored; the reference
answer's name is refused in any letter case, on the page and in the service."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from portal.importing import ImportProblem
from ranking.models import System, SystemOutput
from ranking.services.outputs import outputs_import

from .conftest import SAMPLE

pytestmark = pytest.mark.django_db


def _jsonl(tmp_path, items, second_line: str):
    path = tmp_path / "out.jsonl"
    first = json.dumps({"item_uid": items[0].uid, "system": "S1", "response": "fine"})
    path.write_text(first + "\n" + second_line.replace("UID", items[1].uid) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        ('{"item_uid": "UID", "response": {"score": 1}}', "response", "not an object"),
        ('{"item_uid": "UID", "response": null}', "response", "not null"),
        ('{"item_uid": "UID", "response": true}', "response", "not true/false"),
        ('{"item_uid": "UID", "response": NaN}', "response", "NaN is not a number"),
        ('{"item_uid": "UID", "response": "a\\u0000b"}', "response", "NUL character"),
        ('{"item_uid": "UID", "response": "a\\udc00b"}', "response", "lone surrogate"),
        ('{"item_uid": true, "response": "x"}', "item_uid", "not true/false"),
        ('{"item_uid": "UID", "response": 1' + "0" * 4999 + "}", "response", "5,000 digits"),
        ("[" * 100_000 + "]" * 100_000, None, "nesting deeper than 8 levels"),
        ('{"item_uid": "UID", "response": "x", "score": 1e400}', "score", "the number 1e400 is out of range"),
        ('{"item_uid": "UID", "response": "x", "score": [-1e400]}', "score (entry 1)", "-1e400 is out of range"),
        ('{"item_uid": "UID", "response": "x", "response": "y"}', "response", "is given twice in one object"),
        ('{"item_uid": "UID", "response": "x", "system": true}', "system", "must be a string"),
    ],
)
def test_bad_jsonl_values_are_refused_naming_record_2(sample_items, tmp_path, line, field, words):
    with pytest.raises(ImportProblem) as caught:
        outputs_import(system_name="S1", paths=[_jsonl(tmp_path, sample_items, line)])
    assert (caught.value.file, caught.value.record, caught.value.field) == ("out.jsonl", 2, field)
    assert words in caught.value.detail
    assert not SystemOutput.objects.exists() and not System.objects.exists()


def test_responses_with_their_text_in_an_object_or_a_list_are_accepted(sample_items, tmp_path):
    line = '{"item_uid": "UID", "response": [{"generated_text": "generated"}, "more"]}'
    result = outputs_import(system_name="S1", paths=[_jsonl(tmp_path, sample_items, line)])
    assert result.created == 2
    assert SystemOutput.objects.get(item=sample_items[1]).response == "generated more"


def test_harness_file_values_are_named_by_their_record(sample_items, tmp_path):
    records = json.loads((SAMPLE / "TF.json").read_text())[:2]
    text = json.dumps({"inputs": records, "responses": ["True", "RESPONSE"]}).replace('"RESPONSE"', "Infinity")
    path = tmp_path / "true_false.json"
    path.write_text(text)
    with pytest.raises(ImportProblem) as caught:
        outputs_import(system_name="S1", paths=[path])
    assert (caught.value.record, caught.value.field) == (2, "responses")
    assert "Infinity is not a number" in caught.value.detail


@pytest.mark.parametrize(
    ("second", "field", "words"),
    [
        # The fields an input is matched by are text, as in the dataset: not turned into "True" or "5".
        ({"type": True}, "type", "must be a string, not true/false"),
        ({"question": 5}, "question", "must be a string, not a number"),
        ({"source": "p1"}, "source", "must be an object, not a string"),
        ({"source": {"paragraph_id": 7}}, "source.paragraph_id", "must be a string, not a number"),
        ({"extra": "INF"}, "extra", "the number 1e400 is out of range"),
        ({"extra": "DUP"}, "question", "is given twice in one object"),
    ],
)
def test_harness_inputs_of_the_wrong_type_or_with_hazards_are_refused(sample_items, tmp_path, second, field, words):
    records = json.loads((SAMPLE / "TF.json").read_text())[:2]
    records[1] = {**records[1], **second}
    text = json.dumps({"inputs": records, "responses": ["True", "False"]})
    text = text.replace('"extra": "INF"', '"extra": 1e400').replace('"extra": "DUP"', '"question": "again"')
    path = tmp_path / "true_false.json"
    path.write_text(text)
    with pytest.raises(ImportProblem) as caught:
        outputs_import(system_name="S1", paths=[path])
    assert (caught.value.file, caught.value.record, caught.value.field) == ("true_false.json", 2, field)
    assert words in caught.value.detail
    assert not SystemOutput.objects.exists() and not System.objects.exists()


@pytest.mark.parametrize("name", ["Reference", "REFERENCE", " reference "])
def test_the_reference_answers_name_is_refused_in_any_case(sample_items, tmp_path, name):
    path = _jsonl(tmp_path, sample_items, '{"item_uid": "UID", "response": "x"}')
    with pytest.raises(ImportProblem, match="reserved for the reference answers") as caught:
        outputs_import(system_name=name, paths=[path])
    assert caught.value.field == "system"
    assert not System.objects.exists()


def test_system_names_and_families_longer_than_their_columns_are_refused(sample_items, tmp_path):
    path = _jsonl(tmp_path, sample_items, '{"item_uid": "UID", "response": "x"}')
    with pytest.raises(ImportProblem, match="the limit is 200") as caught:
        outputs_import(system_name="S" * 201, paths=[path])
    assert caught.value.field == "system"
    with pytest.raises(ImportProblem, match="the limit is 100") as caught:
        outputs_import(system_name="S1", family="f" * 101, paths=[path])
    assert caught.value.field == "family"
    assert not System.objects.exists()


def test_the_upload_page_refuses_the_reference_name_at_once(sample_items, organizer_client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("out.jsonl", b'{"item_uid": "x", "response": "y"}\n')
    response = organizer_client.post(reverse("outputs_import"), {"system": "Reference", "files": [upload]})
    assert response.status_code == 400
    assert "reserved for the reference answers" in response.content.decode()
    assert not System.objects.exists()


@pytest.mark.parametrize(
    ("line", "stored"),
    [('{"item_uid": "UID", "response": "x", "prompt": null}', ""), ('{"item_uid": "UID", "response": "x"}', "")],
)
def test_a_missing_prompt_is_stored_empty(sample_items, tmp_path, line, stored):
    outputs_import(system_name="S1", paths=[_jsonl(tmp_path, sample_items, line)])
    assert SystemOutput.objects.get(item=sample_items[1]).prompt == stored


def test_a_prompt_that_is_not_text_is_refused(sample_items, tmp_path):
    line = '{"item_uid": "UID", "response": "x", "prompt": {"role": "user"}}'
    with pytest.raises(ImportProblem, match="must be the prompt's text, not an object") as caught:
        outputs_import(system_name="S1", paths=[_jsonl(tmp_path, sample_items, line)])
    assert (caught.value.record, caught.value.field) == (2, "prompt")
