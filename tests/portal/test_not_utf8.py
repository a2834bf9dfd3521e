"""A file that is not UTF-8 is refused where a person can find the fault: the line and the byte in it (both from 1),
in the same words by every reader (records.text.utf8_text is their one home). An empty JSON file is called empty."""

from __future__ import annotations

import io
import json

import pytest

from evaluation.agreement import StatsInputError, read_csv
from metrics.submission import SubmissionError, load_submission_dir
from portal.importing import ImportProblem, Limits, read_text
from records.jsonl import InputFileError, lines
from records.text import NotUtf8, utf8_text

LATIN1 = "item,system,score\nq1,x,1\nq2,caf\u00e9,2\n".encode("latin-1")  # é is one byte, 0xe9: line 3, byte 7


def test_the_line_and_the_byte_of_the_first_bad_byte():
    with pytest.raises(NotUtf8) as err:
        utf8_text(LATIN1)
    assert (err.value.line, err.value.byte, str(err.value)) == (3, 7, "not UTF-8 text (byte 7)")
    with pytest.raises(NotUtf8) as err:
        utf8_text(b"\xff")
    assert (err.value.line, err.value.byte) == (1, 1)


def test_a_byte_order_mark_is_dropped_only_where_asked():
    assert utf8_text("\ufeffitem".encode()) == "item"
    assert utf8_text("\ufeffitem".encode(), byte_order_mark=False) == "\ufeffitem"


def test_every_reader_names_the_line_and_the_byte(tmp_path):
    with pytest.raises(StatsInputError, match=r"^scores\.csv: line 3: not UTF-8 text \(byte 7\)$"):
        read_csv(io.BytesIO(LATIN1), ["item", "system", "score"], name="scores.csv")
    path = tmp_path / "items.json"
    path.write_bytes(b'[\n{"uid": "a"},\n{"uid": "\xe9"}\n]')
    with pytest.raises(ImportProblem, match=r"^items\.json: line 3: not UTF-8 text \(byte 10\)$"):
        read_text(path, Limits(), "items.json")
    with pytest.raises(InputFileError) as err:
        list(lines([b'{"a": 1}', b'{"b": "\xe9"}'], "labels.jsonl"))
    assert err.value.line == 2 and "not UTF-8 text (byte 8)" in str(err.value)


def test_a_streamed_jsonl_import_names_the_line_without_reading_the_file_again(tmp_path):
    from portal.json_stream import iter_jsonl

    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"uid": "a"}\n\n{"uid": "caf\xe9"}\n')
    with pytest.raises(ImportProblem, match=r"^items\.jsonl: line 3: not UTF-8 text \(byte 13\)$"):
        list(iter_jsonl(path, Limits(), "items.jsonl"))


def test_a_scoring_submission_file_names_the_line(tmp_path):
    # line 2 is ' "inputs": ["é"],': the é is its 14th byte
    (tmp_path / "true_false.json").write_bytes(
        json.dumps({"inputs": [], "responses": [], "prompts": []}, indent=1).encode().replace(b"[]", b'["\xe9"]', 1)
    )
    with pytest.raises(SubmissionError) as err:
        load_submission_dir(tmp_path)
    assert "line 2: not UTF-8 text (byte 14)" in str(err.value)


@pytest.mark.parametrize("content", [b"", b"  \n\n", "\ufeff\n".encode()])
def test_an_empty_json_file_is_called_empty_not_malformed(tmp_path, content):
    from portal.importing import load_json

    path = tmp_path / "gold.json"
    path.write_bytes(content)
    with pytest.raises(ImportProblem, match=r"^gold\.json: the file is empty$"):
        load_json(path, Limits(), "gold.json")
