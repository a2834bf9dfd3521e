"""PromptCBLUE-style JSONL: one object per line with ``input``, ``target``, ``answer_choices``, ``task_type``,
``task_dataset``, ``sample_id`` (Chinese text, kept exactly as given)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from annotation.importers.base import ParsedItem, require_json_start
from annotation.models import QAItem
from annotation.qa_types import QAType
from portal.importing import ImportProblem, Limits, identifier, require_fits, require_str
from portal.json_stream import iter_jsonl


def parse_file(path: Path, limits: Limits, display: str | None = None) -> list[ParsedItem]:
    return list(iter_file(path, limits, display))


def iter_file(
    path: Path, limits: Limits, display: str | None = None, *, on_read: Callable[[int], None] | None = None
) -> Iterator[ParsedItem]:
    """Each item of the file, parsed and checked, read line by line."""
    display = display or path.name
    require_json_start(path, display, benchmark="PromptCBLUE", expected="JSONL: one object a line", starts="{[")
    for index, record in iter_jsonl(path, limits, display, on_read=on_read):
        yield parse_record(record, display, index)


def parse_record(record, display: str, index: int) -> ParsedItem:
    if not isinstance(record, dict):
        raise ImportProblem(display, f"must be a JSON object, not {type(record).__name__}", record=index)
    sample_id = identifier(record.get("sample_id"), display, index, field="sample_id")
    uid = require_fits(f"pcb-{sample_id}", QAItem, "uid", display, index, field="sample_id")
    question = require_str(record, "input", display, index)
    target = require_str(record, "target", display, index, allow_empty=True)
    choices = record.get("answer_choices", [])
    if choices is None:
        choices = []
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise ImportProblem(display, "must be a list of strings", record=index, field="answer_choices")
    for name in ("task_type", "task_dataset"):
        if name in record and not isinstance(record[name], str):
            raise ImportProblem(display, "must be a string", record=index, field=name)
    fields = {
        "question": question,
        "answer": target,
        "options": choices,
        "extra": {"task_type": record.get("task_type", ""), "task_dataset": record.get("task_dataset", "")},
    }
    return ParsedItem(
        uid=uid,
        qa_type=QAType.GENERIC,
        fields=fields,
        raw=record | {"sample_id": sample_id},  # one representation: text, as in the uid
        benchmark="promptcblue",
        file=display,
        record=index,
    )
