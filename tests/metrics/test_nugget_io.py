"""The nugget JSONL readers on in-memory lines (how the portal's upload pages call them)."""

from __future__ import annotations

import json

import pytest

from metrics.nugget_io import (
    Answer,
    Label,
    NuggetInputError,
    read_answers_jsonl,
    read_labels_jsonl,
    read_nuggets_jsonl,
)
from metrics.nuggets import Nugget

ITEM = {"item_uid": " q1 ", "nuggets": [{"id": "n1", "text": " Aspirin lowers fever. ", "importance": "okay"}],
        "drafted_by": "a model"}  # fmt: skip


def test_reads_bytes_lines_with_bom_crlf_and_blank_lines():
    lines = ["\ufeff".encode() + json.dumps(ITEM).encode() + b"\r\n", b"\r\n", b"   \n"]
    assert read_nuggets_jsonl(lines, name="upload.jsonl") == {"q1": [Nugget("n1", "Aspirin lowers fever.", "okay")]}


def test_answers_and_labels_from_text_lines_judge_key_accepted():
    nuggets = {"q1": [Nugget("n1", "Aspirin lowers fever.", "okay")]}
    answers = read_answers_jsonl(
        [json.dumps({"item_uid": "q1", "system": "s", "response": ""})], name="a.jsonl", nuggets=nuggets
    )
    assert answers == [Answer("q1", "s", "")]  # an empty response is an answer that supports nothing
    row = {"item_uid": "q1", "system": "s", "nugget_id": "n1", "label": "partial", "judge": "llm"}
    labels = read_labels_jsonl([json.dumps(row)], name="j.jsonl", nuggets=nuggets, answers=answers)
    assert labels == [Label("q1", "s", "n1", "partial", "llm")]


def test_error_carries_file_line_and_field_apart():
    bad = {**ITEM, "nuggets": [{"id": "n1", "text": "x", "importance": "must"}]}
    with pytest.raises(NuggetInputError) as caught:
        read_nuggets_jsonl(["", json.dumps(bad)], name="upload.jsonl")
    err = caught.value
    assert (err.file, err.line, err.field) == ("upload.jsonl", 2, "nuggets (entry 1).importance")
    assert str(err) == (
        "upload.jsonl, line 2, field 'nuggets (entry 1).importance': 'must' is not one of vital, okay, avoid"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"item_uid": NaN, "nuggets": []}', "field 'item_uid': NaN is not a number"),
        ('{"item_uid": "q\\u0000", "nuggets": []}', "field 'item_uid': contains a NUL character"),
        ('{"item_uid": "q\\ud800", "nuggets": []}', "field 'item_uid': contains a lone surrogate"),
        ('{"item_uid": "q", "nuggets": [' + "[" * 25 + "]" * 25 + "]}", "line 1: nesting deeper than 20 levels"),
        ("null", "line 1: must be a JSON object, not null"),
    ],
)
def test_hostile_values(line, message):
    with pytest.raises(NuggetInputError, match=message.replace("(", r"\(")):
        read_nuggets_jsonl([line], name="n.jsonl")
