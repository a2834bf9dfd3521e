"""Every reader of a user's JSON Lines file (nuggets, answers, nugget labels, hallucination spans, judge scores)
refuses, wherever it sits in a line, a number that is not finite (``1e400`` and ``-1e400`` overflow to infinity), a
key given twice in one object, and a value of the wrong JSON type, naming the file, the line (from 1) and the field.
They all read through :mod:`records.jsonl`, whose parser is :mod:`records.json_values`."""

from __future__ import annotations

import json

import pytest

from evaluation.agreement import StatsInputError
from evaluation.judges import read_judge_rows
from metrics.nugget_io import read_answers_jsonl, read_labels_jsonl, read_nuggets_jsonl
from metrics.span_io import read_spans_jsonl
from records.json_values import json_loads, refused_value
from records.jsonl import InputFileError

NUGGETS = {"item_uid": "q1", "nuggets": [{"id": "n1", "text": "Aspirin lowers fever.", "importance": "vital"}]}
ANSWER = {"item_uid": "q1", "system": "s", "response": "Aspirin."}
LABEL = {"item_uid": "q1", "system": "s", "nugget_id": "n1", "label": "support", "judge": "llm"}
SPANS = {
    "id": "a1",
    "model_output_text": "Aspirin cures cancer.",
    "soft_labels": [{"start": 8, "end": 20, "prob": 1.0}],
}
SCORE = {"item_uid": "q1", "system": "s", "score": 0.5, "judge": "llm"}


READERS = {
    "nuggets": (read_nuggets_jsonl, NUGGETS),
    "answers": (read_answers_jsonl, ANSWER),
    "labels": (read_labels_jsonl, LABEL),
    "spans": (read_spans_jsonl, SPANS),
    "judge scores": (read_judge_rows, SCORE),  # its errors are the stats package's, with the same message
}

# The second line is a good record with ``"EXTRA": 1`` replaced by: (text, the field named, words of the message)
HAZARDS = {
    "1e400 (infinite)": ('"extra": 1e400', "extra", "the number 1e400 is out of range"),
    "-1e400 (infinite)": ('"extra": [0, -1e400]', "extra (entry 2)", "the number -1e400 is out of range"),
    "Infinity": ('"extra": {"x": Infinity}', "extra.x", "Infinity is not a number"),
    "NaN": ('"extra": NaN', "extra", "NaN is not a number"),
    "a key twice": ('"KEY": "again"', "KEY", "is given twice in one object"),
}


@pytest.mark.parametrize("hazard", HAZARDS)
@pytest.mark.parametrize("reader", READERS)
def test_every_jsonl_reader_refuses_non_finite_numbers_and_repeated_keys(reader, hazard):
    read, good = READERS[reader]
    text, field, words = HAZARDS[hazard]
    key = next(iter(good))  # the record's first field ("item_uid", "id"), which every reader reads
    second = json.dumps({**good, "EXTRA": 1}).replace('"EXTRA": 1', text.replace("KEY", key))
    with pytest.raises((InputFileError, StatsInputError)) as caught:
        read([json.dumps(good), "", second], name="hostile.jsonl")
    assert f"hostile.jsonl, line 3, field '{field.replace('KEY', key)}': {words}" in str(caught.value)


@pytest.mark.parametrize(
    ("reader", "change", "field", "words"),
    [
        ("nuggets", {"item_uid": True}, "item_uid", "must be a string, not true/false"),
        (
            "nuggets",
            {"item_uid": "q2", "nuggets": [{"id": "n1", "text": 5, "importance": "vital"}]},
            "nuggets (entry 1).text",
            "must be a string, not a number",
        ),
        ("answers", {"response": ["Aspirin."]}, "response", "must be a string, not a list"),
        ("labels", {"label": True}, "label", "must be a string, not true/false"),
        (
            "spans",
            {"id": "a2", "soft_labels": [{"start": 8, "end": 20, "prob": "1"}]},
            "soft_labels (entry 1).prob",
            "prob must be a number",
        ),
        ("spans", {"id": "a2", "model_output_text": False}, "model_output_text", "must be a string, not true/false"),
        ("judge scores", {"score": True}, "score", "must be a number, not true/false"),
        ("judge scores", {"judge": 7}, "judge", "must be a string, not a number"),
    ],
)
def test_a_value_of_the_wrong_json_type_is_refused_naming_the_field(reader, change, field, words):
    read, good = READERS[reader]
    with pytest.raises((InputFileError, StatsInputError)) as caught:
        read([json.dumps(good), json.dumps({**good, **change})], name="typed.jsonl")
    assert f"typed.jsonl, line 2, field '{field}': {words}" in str(caught.value)


def test_the_parser_marks_each_refused_value_where_it_sits():
    document = json_loads('{"a": [1, {"b": 1e400}], "c": 1, "c": 2}')
    assert refused_value(document) == (["a", 1, "b"], "the number 1e400 is out of range")
    assert refused_value(json_loads('{"c": 1, "c": 2}')) == (
        ["c"],
        "is given twice in one object (each key may appear once)",
    )
    assert refused_value(json_loads('{"a": 1e308, "b": -1.5e-400, "c": 123456789012345}')) is None
