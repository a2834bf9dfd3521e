"""ClinIQLink dataset files: ``TF.json``, ``MC.json``, ``list.json``, ``short.json``, ``short_inverse.json``,
``multi_hop.json``, ``multi_hop_inverse.json`` (each a JSON array of items; one level of nested arrays is
flattened, as the ClinIQLink ``submit.py`` does). A file with another name is read by each record's ``type``.
"""

from __future__ import annotations

from pathlib import Path

from annotation.importers.base import (
    ImportProblem,
    Limits,
    ParsedItem,
    content_uid,
    load_json,
    require_str,
    require_str_list,
)
from annotation.qa_types import CLINIQLINK_FILES, CLINIQLINK_TYPES, QAType

_KNOWN_TYPES = {t.value for t in CLINIQLINK_TYPES}


def parse_file(path: Path, limits: Limits, display: str | None = None) -> list[ParsedItem]:
    display = display or path.name
    data = load_json(path, limits, display)
    if not isinstance(data, list):
        raise ImportProblem(display, f"expected a JSON array of items, found a JSON {type(data).__name__}")
    records: list = []
    for entry in data:
        records.extend(entry if isinstance(entry, list) else [entry])
    if len(records) > limits.max_records:
        raise ImportProblem(display, f"{len(records):,} records; the limit is {limits.max_records:,}")
    expected_type = CLINIQLINK_FILES.get(path.name)
    return [parse_record(record, display, index, expected_type) for index, record in enumerate(records)]


def parse_record(record, display: str, index: int, expected_type: QAType | None = None) -> ParsedItem:
    if not isinstance(record, dict):
        raise ImportProblem(display, f"must be a JSON object, not {type(record).__name__}", record=index)
    qa_type = require_str(record, "type", display, index)
    if qa_type not in _KNOWN_TYPES:
        known = ", ".join(sorted(_KNOWN_TYPES))
        raise ImportProblem(display, f"unknown type {qa_type!r} (known: {known})", record=index, field="type")
    if expected_type is not None and qa_type != expected_type:
        raise ImportProblem(
            display, f"{qa_type!r} in a file that holds {expected_type.value!r} items", record=index, field="type"
        )
    fields = {"question": require_str(record, "question", display, index)}
    fields.update(_source_fields(record, display, index))
    fields.update(_TYPE_PARSERS[qa_type](record, display, index))
    uid = record.get("uid") or record.get("id")
    if uid is not None and not isinstance(uid, str | int):
        raise ImportProblem(display, "must be a string or an integer", record=index, field="uid")
    uid = str(uid) if uid is not None else content_uid("cl", record)
    return ParsedItem(uid=uid, qa_type=qa_type, fields=fields, raw=record, file=display, record=index)


def _source_fields(record: dict, display: str, index: int) -> dict:
    if "source" not in record:
        raise ImportProblem(display, "missing", record=index, field="source")
    source = record["source"]
    if not isinstance(source, dict):
        raise ImportProblem(display, "must be an object with isbn, page, paragraph_id", record=index, field="source")
    pid = source.get("paragraph_id")
    if not isinstance(pid, str) or not pid.strip():
        raise ImportProblem(display, "missing or not a string", record=index, field="source.paragraph_id")
    for key in ("isbn", "page"):
        if key in source and not isinstance(source[key], str | int):
            raise ImportProblem(display, "must be a string or an integer", record=index, field=f"source.{key}")
    return {"isbn": str(source.get("isbn", "")), "page": str(source.get("page", "")), "paragraph_id": pid}


def _true_false(record, display, index):
    answer = require_str(record, "answer", display, index)
    if answer.strip().lower() not in {"true", "false"}:
        raise ImportProblem(display, f"must be 'True' or 'False', not {answer!r}", record=index, field="answer")
    return {"answer": answer}


def _multiple_choice(record, display, index):
    options = require_str_list(record, "options", display, index, min_len=2)
    correct = require_str(record, "correct_answer", display, index)
    letters = {chr(65 + i) for i in range(len(options))}
    if correct not in options and correct.strip().upper() not in letters:
        raise ImportProblem(
            display, "is neither one of the options nor an option letter", record=index, field="correct_answer"
        )
    return {"options": options, "correct_answer": correct}


def _list(record, display, index):
    return {
        "options": require_str_list(record, "options", display, index, min_len=1),
        "answer_list": require_str_list(record, "answer", display, index, min_len=1),
    }


def _short(record, display, index):
    return {"answer": require_str(record, "answer", display, index)}


def _short_inverse(record, display, index):
    return {
        "answer": require_str(record, "answer", display, index),
        "false_answer": require_str(record, "false_answer", display, index),
        "incorrect_explanation": require_str(record, "incorrect_explanation", display, index),
    }


def _multi_hop(record, display, index):
    return {
        "answer": require_str(record, "answer", display, index),
        "reasoning": require_str_list(record, "reasoning", display, index),
    }


def _multi_hop_inverse(record, display, index):
    fields = _multi_hop(record, display, index)
    fields["incorrect_reasoning_step"] = require_str_list(record, "incorrect_reasoning_step", display, index)
    return fields


_TYPE_PARSERS = {
    QAType.TRUE_FALSE: _true_false,
    QAType.MULTIPLE_CHOICE: _multiple_choice,
    QAType.LIST: _list,
    QAType.SHORT: _short,
    QAType.SHORT_INVERSE: _short_inverse,
    QAType.MULTI_HOP: _multi_hop,
    QAType.MULTI_HOP_INVERSE: _multi_hop_inverse,
}
