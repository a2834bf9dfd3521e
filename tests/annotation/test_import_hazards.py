"""Hostile values in every import format are refused as input errors naming file, record (from 1) and field,
and nothing is written: deep nesting, NUL characters, lone surrogates, NaN / Infinity and numbers that overflow to
infinity (1e400), integers of thousands of digits, a key given twice in one object, CSV cells over the csv module's
limit, values longer than their column, text over the length bound, values of the wrong JSON type (true where the
format has "True") and values with a second representation (boolean ids, list answers outside the options)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.models import GoldItem, QAItem, SourcePassage
from annotation.services.gold import gold_import
from annotation.services.imports import items_import, sources_import
from portal.importing import ImportProblem

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "cliniqlink-sample"
GOOD_TF = json.loads((SAMPLE / "TF.json").read_text())[0]

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "9" * 5000


def _tf(**changes) -> dict:
    return {**GOOD_TF, **changes}


def _raw_tf(extra: str) -> str:
    """A good true/false record's JSON with ``extra`` (raw JSON text, e.g. a repeated key) as its last member."""
    return json.dumps(GOOD_TF)[:-1] + ", " + extra + "}"


def _array_with_second(record_text: str) -> str:
    """A JSON array whose first record is good and whose second is ``record_text`` (raw JSON)."""
    return f"[{json.dumps(GOOD_TF)}, {record_text}]"


ITEM_CASES = [
    # (file text, expected field, words of the message)
    (_array_with_second(DEEP), None, "nesting deeper than 8 levels"),
    (_array_with_second(json.dumps(_tf(question="a\x00b"))), "question", "NUL character"),
    (_array_with_second(json.dumps(_tf(question="a\ud800b"))), "question", "lone surrogate"),
    (_array_with_second(json.dumps(_tf(source={**GOOD_TF["source"], "page": float("nan")}))), "source.page", "NaN"),
    (_array_with_second(json.dumps(_tf(extra=float("inf")))), "extra", "Infinity"),
    (
        _array_with_second(json.dumps(_tf(source={**GOOD_TF["source"], "page": "P"})).replace('"P"', HUGE_INT)),
        "source.page",
        "5,000 digits",
    ),  # fmt: skip
    (_array_with_second(json.dumps(_tf(question="x" * 10_000_000))), "question", "10,000,000 characters"),
    (_array_with_second(json.dumps(_tf(uid="u" * 101))), "uid", "101 characters long; the limit is 100"),
    (_array_with_second(json.dumps(_tf(uid=True))), "uid", "not true/false"),
    (_array_with_second(json.dumps(_tf(source={**GOOD_TF["source"], "isbn": "9" * 41}))), "source.isbn", "limit is 40"),
    (_array_with_second(json.dumps(_tf(source={**GOOD_TF["source"], "page": "xii"}))), "source.page", "page number"),
    (
        _array_with_second(json.dumps(_tf(source={**GOOD_TF["source"], "paragraph_id": "p" * 201}))),
        "source.paragraph_id",
        "limit is 200",
    ),  # fmt: skip
    (_array_with_second(json.dumps(_tf(answer="maybe"))), "answer", "must be 'True' or 'False'"),
    # A number too large for a float is infinity to Python: refused like Infinity, wherever it sits.
    (_array_with_second(_raw_tf('"extra": 1e400')), "extra", "the number 1e400 is out of range"),
    (_array_with_second(_raw_tf('"extra": [1, -1e400]')), "extra (entry 2)", "the number -1e400 is out of range"),
    # A key given twice: Python keeps the last, other readers the first.
    (_array_with_second(_raw_tf('"question": "dup2"')), "question", "is given twice in one object"),
    (_array_with_second(json.dumps(GOOD_TF).replace('"page": 0', '"page": 0, "page": 2')), "source.page", "twice"),
    # JSON true/false where the format has text ("True" / "False") is another type, not a spelling.
    (_array_with_second(json.dumps(_tf(answer=True))), "answer", "must be a string, not true/false"),
    (_array_with_second(json.dumps(_tf(question=12))), "question", "must be a string, not a number"),
]


@pytest.mark.parametrize(("text", "field", "words"), ITEM_CASES)
def test_cliniqlink_hazards_are_refused_naming_record_2_and_the_field(tmp_path, text, field, words):
    path = tmp_path / "items.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    with pytest.raises(ImportProblem) as caught:
        items_import(paths=[path])
    assert (caught.value.file, caught.value.record, caught.value.field) == ("items.json", 2, field)
    assert words in caught.value.detail
    assert not QAItem.objects.exists()


def test_records_in_nested_arrays_are_counted_as_they_are_read(tmp_path):
    path = tmp_path / "TF.json"
    # Three distinct good records first: records are read (and refused) in order, so a repeat would be named first.
    path.write_text(json.dumps([[GOOD_TF, _tf(question="y")], [_tf(question="x"), _tf(question="a\x00")]]))
    with pytest.raises(ImportProblem) as caught:
        items_import(paths=[path])
    assert (caught.value.record, caught.value.field) == (4, "question")


def test_a_list_answer_outside_its_options_is_refused(tmp_path):
    record = json.loads((SAMPLE / "list.json").read_text())[0]
    path = tmp_path / "list.json"
    path.write_text(json.dumps([record, {**record, "answer": [record["options"][0], "Not an option"]}]))
    with pytest.raises(ImportProblem) as caught:
        items_import(paths=[path])
    assert (caught.value.record, caught.value.field) == (2, "answer (entry 2)")
    assert "'Not an option' is not one of the options" in str(caught.value)


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        ('{"input": "问\\u0000", "target": "答", "sample_id": "2"}', "input", "NUL character"),
        ('{"input": "问", "target": "答", "sample_id": ' + HUGE_INT + "}", "sample_id", "5,000 digits"),
        ('{"input": "问", "target": "答", "sample_id": true}', "sample_id", "not true/false"),
        ('{"input": "问", "target": NaN, "sample_id": "2"}', "target", "NaN"),
        ('{"input": "问", "target": "答", "sample_id": "2", "score": 1e400}', "score", "1e400 is out of range"),
        ('{"input": "问", "target": "答", "sample_id": "2", "input": "另"}', "input", "given twice in one object"),
        ('{"input": "问", "target": true, "sample_id": "2"}', "target", "must be a string, not true/false"),
        ('{"input": "问", "target": "答", "sample_id": "2", "task_type": 3}', "task_type", "must be a string"),
        (DEEP, None, "nesting deeper than 8 levels"),
    ],
)
def test_promptcblue_hazards_name_the_line_and_field(tmp_path, line, field, words):
    path = tmp_path / "p.jsonl"
    path.write_text('{"input": "问", "target": "答", "sample_id": "1"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ImportProblem) as caught:
        items_import(paths=[path], fmt="promptcblue")
    assert (caught.value.file, caught.value.record, caught.value.field) == ("p.jsonl", 2, field)
    assert words in caught.value.detail
    assert not QAItem.objects.exists()


def test_jsonl_records_may_hold_unicode_line_separators(tmp_path):
    path = tmp_path / "p.jsonl"
    record = {"input": "第一行\u2028第二行\x85", "target": "答", "sample_id": "1"}
    path.write_text(json.dumps(record, ensure_ascii=False) + "\r\n", encoding="utf-8")
    assert items_import(paths=[path], fmt="promptcblue").created == 1
    assert QAItem.objects.get().question == record["input"]


@pytest.mark.parametrize(
    ("name", "text", "field", "words"),
    [
        ("p.csv", "paragraph_id,page,text\np1,1,ok\np2,2," + "x" * 200_000 + "\n", None, "longer than 131,072"),
        ("p.csv", "paragraph_id,page,text\np1,1,ok\np2,2,a\x00b\n", "text", "NUL character"),
        ("p.csv", "paragraph_id,page,text\np1,1,ok\np2,xii,b\n", "page", "page number"),
        ("p.csv", "paragraph_id,page,text\np1,1,ok\np2,2,b,extra\n", None, "more cell(s) than the header"),
        ("p.csv", "paragraph_id,isbn,text\np1,1,ok\np2," + "9" * 41 + ",b\n", "isbn", "limit is 40"),
        (
            "p.json",
            json.dumps([{"paragraph_id": "p1", "text": "ok"}, {"paragraph_id": "p" * 201, "text": "b"}]),
            "paragraph_id",
            "limit is 200",
        ),  # fmt: skip
        (
            "p.json",
            '[{"paragraph_id": "p1", "text": "ok"}, {"paragraph_id": "p2", "text": "b", "page": Infinity}]',
            "page",
            "Infinity",
        ),  # fmt: skip
        ("p.json", '[{"paragraph_id": "p1", "text": "ok"}, ' + DEEP + "]", None, "nesting deeper"),
        ("p.csv", "paragraph_id,page,text\np1,1,ok\np2,1e400,b\n", "page", "page number"),
        (
            "p.json",
            '[{"paragraph_id": "p1", "text": "ok"}, {"paragraph_id": "p2", "text": "b", "page": -1e400}]',
            "page",
            "the number -1e400 is out of range",
        ),
        (
            "p.json",
            '[{"paragraph_id": "p1", "text": "ok"}, {"paragraph_id": "p2", "text": "b", "text": "c"}]',
            "text",
            "is given twice in one object",
        ),
        (
            "p.json",
            '[{"paragraph_id": "p1", "text": "ok"}, {"paragraph_id": 2, "text": "b"}]',
            "paragraph_id",
            "must be a string, not a number",
        ),
    ],
)
def test_source_passage_hazards_name_record_2(tmp_path, name, text, field, words):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ImportProblem) as caught:
        sources_import(paths=[path])
    assert (caught.value.file, caught.value.record, caught.value.field) == (name, 2, field)
    assert words in caught.value.detail
    assert not SourcePassage.objects.exists()


def test_a_csv_header_with_a_nul_names_the_column(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("paragraph_id,text,no\x00te\np1,ok,x\n")
    with pytest.raises(ImportProblem, match=r"^p.csv: column 3 of the CSV header contains a NUL character"):
        sources_import(paths=[path])


def test_a_batch_name_longer_than_its_column_is_refused():
    with pytest.raises(ImportProblem, match="field 'batch_name': is 201 characters long; the limit is 200"):
        items_import(paths=[SAMPLE / "TF.json"], batch_name="b" * 201)
    assert not QAItem.objects.exists()


def test_source_pages_are_stored_as_one_representation(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"paragraph_id": "p1", "text": "a", "page": 7}, {"paragraph_id": "p2", "text": "b",
                                                                                  "page": "007", "isbn": 978}]))  # fmt: skip
    sources_import(paths=[path])
    assert dict(SourcePassage.objects.values_list("paragraph_id", "page")) == {"p1": "7", "p2": "7"}
    assert SourcePassage.objects.get(paragraph_id="p2").isbn == "978"


@pytest.mark.parametrize(
    ("name", "text", "field", "words"),
    [
        ("gold.csv", "uid,expected_verdict,note\n{uid},correct,ok\n{uid2},correct,a\x00b\n", "note", "NUL"),
        (
            "gold.csv",
            "uid,expected_verdict,note\n{uid},correct,ok\n{uid2},correct," + "x" * 200_000 + "\n",
            None,
            "longer than 131,072",
        ),  # fmt: skip
        ("gold.json", '[{{"uid": "{uid}", "expected_verdict": "correct"}}, ' + DEEP + "]", None, "nesting deeper"),
        (
            "gold.json",
            '[{{"uid": "{uid}", "expected_verdict": "correct"}}, {{"uid": "{uid2}", "expected_verdict": '
            '"correct", "planted_error": NaN}}]',
            "planted_error",
            "NaN",
        ),  # fmt: skip
        (
            "gold.json",
            '[{{"uid": "{uid}", "expected_verdict": "correct"}}, {{"uid": "' + "u" * 101 + '", '
            '"expected_verdict": "correct"}}]',
            "uid",
            "limit is 100",
        ),  # fmt: skip
        (
            "gold.json",
            '[{{"uid": "{uid}", "expected_verdict": "correct"}}, {{"uid": "{uid2}", "expected_verdict": '
            '"correct", "planted_error": 1e400}}]',
            "planted_error",
            "the number 1e400 is out of range",
        ),
        (
            "gold.json",
            '[{{"uid": "{uid}", "expected_verdict": "correct"}}, {{"uid": "{uid2}", "expected_verdict": '
            '"correct", "expected_verdict": "incorrect"}}]',
            "expected_verdict",
            "is given twice in one object",
        ),
        (
            "gold.json",
            '[{{"uid": "{uid}", "expected_verdict": "correct"}}, {{"uid": "{uid2}", "expected_verdict": '
            '"correct", "note": 5}}]',
            "note",
            "must be text",
        ),
    ],
)
def test_gold_file_hazards_name_record_2(sample_items, organizer, tmp_path, name, text, field, words):
    path = tmp_path / name
    path.write_text(text.replace("{uid}", sample_items[0].uid).replace("{uid2}", sample_items[1].uid).format(),
                    encoding="utf-8")  # fmt: skip
    with pytest.raises(ImportProblem) as caught:
        gold_import(path=path, by=organizer)
    assert (caught.value.file, caught.value.record, caught.value.field) == (name, 2, field)
    assert words in caught.value.detail
    assert not GoldItem.objects.exists()


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "gold.json, record 1: nesting deeper than 8 levels"),
        (b'[{"uid": "x", "expected_verdict": "correct", "note": "a\\u0000"}]', "record 1, field &#x27;note&#x27;"),
        (b'[{"uid": "x\\udfff", "expected_verdict": "correct"}]', "contains a lone surrogate"),
    ],
)
def test_the_gold_upload_form_refuses_bad_files_with_a_400(sample_items, organizer_client, content, words):
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = organizer_client.post("/organize/vetting/gold/", {"gold_file": SimpleUploadedFile("gold.json", content)})
    assert response.status_code == 400
    assert "Nothing was marked." in response.content.decode() and words in response.content.decode()
    assert not GoldItem.objects.exists()


def test_a_sources_job_queued_with_the_single_file_parameters_still_runs(tmp_path):
    from annotation.tasks import import_sources_task
    from portal.jobs import job_create

    path = tmp_path / "upload.csv"
    path.write_text("paragraph_id,text\np1,one\n")
    job = job_create(kind="import_sources", params={"path": str(path), "display": "mine.csv"})
    import_sources_task(str(job.pk))
    job.refresh_from_db()
    assert job.status == "succeeded" and job.result["created"] == 1, job.error


def test_a_text_over_its_bound_is_told_the_limit_not_a_setting_name():
    from portal.importing import Limits, text_problem

    assert text_problem("x" * 101, Limits(max_text_chars=100)) == "is 101 characters long; the limit is 100"
    assert text_problem("x" * 100, Limits(max_text_chars=100)) is None
