"""ClinIQLink dataset files: ``TF.json``, ``MC.json``, ``list.json``, ``short.json``, ``short_inverse.json``,
``multi_hop.json``, ``multi_hop_inverse.json`` (each a JSON array of items; one level of nested arrays is
flattened, as the ClinIQLink ``submit.py`` does). A file with another name is read by each record's ``type``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from annotation.importers.base import ParsedItem, page_number, require_json_start
from annotation.models import QAItem
from annotation.qa_types import CLINIQLINK_FILES, CLINIQLINK_TYPES, QAType
from portal.importing import (
    ImportProblem,
    Limits,
    content_uid,
    identifier,
    require_fits,
    require_str,
    require_str_list,
)
from portal.json_stream import iter_array_records

_KNOWN_TYPES = {t.value for t in CLINIQLINK_TYPES}


def parse_file(path: Path, limits: Limits, display: str | None = None) -> list[ParsedItem]:
    return list(iter_file(path, limits, display))


def iter_file(
    path: Path, limits: Limits, display: str | None = None, *, on_read: Callable[[int], None] | None = None
) -> Iterator[ParsedItem]:
    """Each item of the file, parsed and checked, read record by record (the file is never held whole)."""
    display = display or path.name
    expected_type = CLINIQLINK_FILES.get(path.name)
    require_json_start(path, display, benchmark="ClinIQLink", expected="an array of items as in TF.json", starts="[{")
    records = iter_array_records(path, limits, display, flatten=True, expected="a JSON array of items",
                                 on_read=on_read)  # fmt: skip
    for number, record in records:
        yield parse_record(record, display, number, expected_type)


def parse_record(record, display: str, index: int, expected_type: QAType | None = None) -> ParsedItem:
    """One item; ``index`` is its record number (from 1). ``raw`` keeps the record with its values in their one
    stored representation (:func:`_normalised`); the content uid is taken from the record as written, so a file
    imported before that normalisation is still recognised."""
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
    raw = _normalised(record, display, index)
    fields = {"question": require_str(record, "question", display, index)}
    fields.update(_source_fields(raw, display, index))
    fields.update(_TYPE_PARSERS[qa_type](raw, display, index))
    id_key = next((key for key in ("uid", "id") if record.get(key) not in (None, "")), None)
    uid = raw[id_key] if id_key else content_uid("cl", record)
    return ParsedItem(uid=uid, qa_type=qa_type, fields=fields, raw=raw, file=display, record=index)


def _normalised(record: dict, display: str, index: int) -> dict:
    """A copy of ``record`` with one representation per value: ids as text, ``source.isbn`` as text,
    ``source.page`` as a whole number (as in the public files), a true/false answer as ``"True"``/``"False"`` (given
    as text: ``"true"`` is the same answer, JSON ``true`` is refused)."""
    raw = dict(record)
    for key in ("uid", "id"):
        if raw.get(key) not in (None, ""):
            raw[key] = require_fits(identifier(raw[key], display, index, field=key), QAItem, "uid", display, index,
                                    field=key)  # fmt: skip
    source = raw.get("source")
    if isinstance(source, dict):
        source = raw["source"] = dict(source)
        if "page" in source:
            source["page"] = page_number(source["page"], display, index, field="source.page")
        if source.get("isbn", "") != "":
            isbn = identifier(source["isbn"], display, index, field="source.isbn")
            source["isbn"] = require_fits(isbn, QAItem, "isbn", display, index, field="source.isbn")
    if raw.get("type") == QAType.TRUE_FALSE and "answer" in raw:
        # The format writes the answer as text; JSON true/false is another type (refused, as every wrong type is),
        # not a second spelling to coerce. Text in another letter case or with spaces is the same answer.
        answer = require_str(raw, "answer", display, index).strip().lower()
        if answer not in ("true", "false"):
            raise ImportProblem(display, f"must be 'True' or 'False', not {raw['answer']!r}", record=index,
                                field="answer")  # fmt: skip
        raw["answer"] = "True" if answer == "true" else "False"
    return raw


def _source_fields(record: dict, display: str, index: int) -> dict:
    if "source" not in record:
        raise ImportProblem(display, "missing", record=index, field="source")
    source = record["source"]
    if not isinstance(source, dict):
        raise ImportProblem(display, "must be an object with isbn, page, paragraph_id", record=index, field="source")
    pid = source.get("paragraph_id")
    if not isinstance(pid, str) or not pid.strip():
        raise ImportProblem(display, "missing or not a string", record=index, field="source.paragraph_id")
    require_fits(pid, QAItem, "paragraph_id", display, index, field="source.paragraph_id")
    page = str(source["page"]) if "page" in source else ""
    return {"isbn": source.get("isbn", ""), "page": page, "paragraph_id": pid}


def _true_false(record, display, index):
    return {"answer": require_str(record, "answer", display, index)}  # "True" / "False" (see _normalised)


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
    options = require_str_list(record, "options", display, index, min_len=1)
    answers = require_str_list(record, "answer", display, index, min_len=1)
    for number, answer in enumerate(answers, start=1):
        if answer not in options:
            raise ImportProblem(display, f"{answer[:80]!r} is not one of the options", record=index,
                                field=f"answer (entry {number})")  # fmt: skip
    return {"options": options, "answer_list": answers}


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
