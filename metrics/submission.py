"""Read a ClinIQLink harness output folder (docs/metric.md §2.3) and check it before scoring.

A folder holds up to seven files, ``true_false.json`` … ``multi_hop_inverse.json``, each
``{"inputs": [...], "responses": [...], "prompts": [...]}`` with ``inputs[i]`` and ``responses[i]`` aligned by
position. Missing files are skipped with a note (the public scorer does the same). Every problem — unreadable
JSON, a missing or unknown top-level field, a length mismatch, an input item without a field its type needs or
with the wrong JSON type — is reported as ``<file>: <field>: <message>``, and nothing is scored.

``allow_length_mismatch=True`` reproduces the public scorer instead for the one case docs/metric.md §2.3 documents:
a file whose ``inputs`` and ``responses`` differ in length (a missing one counts as empty, as its
``blob.get(key, [])`` reads them) is loaded, with a note, and the scorer gives that type 0 while its inputs still
count in the IDF corpus (§5.3). Organizers reproducing the official numbers need that; by default it is an error.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from records.json_values import json_loads, place, refused_value
from records.text import NotUtf8, utf8_text

QA_FILES = {
    "true_false": "true_false.json",
    "multiple_choice": "multiple_choice.json",
    "list": "list.json",
    "short": "short.json",
    "multi_hop": "multi_hop.json",
    "short_inverse": "short_inverse.json",
    "multi_hop_inverse": "multi_hop_inverse.json",
}
TOP_LEVEL_FIELDS = {"inputs", "responses", "prompts"}
MAX_PROBLEMS_PER_FILE = 20

_STR, _STR_LIST = "a string", "a list of strings"
#: Fields each type's scoring reads, and the JSON type they must have.
REQUIRED_FIELDS: dict[str, dict[str, str]] = {
    "true_false": {"question": _STR, "answer": _STR},
    "multiple_choice": {"question": _STR, "options": _STR_LIST, "correct_answer": _STR},
    "list": {"question": _STR, "options": _STR_LIST, "answer": _STR_LIST},
    "short": {"question": _STR, "answer": _STR},
    "multi_hop": {"question": _STR, "answer": _STR},
    "short_inverse": {"question": _STR, "incorrect_explanation": _STR},
    "multi_hop_inverse": {"question": _STR, "incorrect_reasoning_step": "a string or a list of strings"},
}
#: Fields that are optional but, when present, are read by the scorer (IDF corpus, keys).
OPTIONAL_FIELDS = {"answer": "a string or a list of strings", "source": "an object"}


@dataclass(frozen=True)
class Problem:
    file: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.message}"


class SubmissionError(ValueError):
    """A submission folder that cannot be scored; ``problems`` names each file and field."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass
class Submission:
    name: str
    path: Path
    inputs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    responses: dict[str, list[Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def n_items(self) -> int:
        return sum(len(v) for v in self.inputs.values())


def _is_type(value: Any, kind: str) -> bool:
    is_str_list = isinstance(value, list) and all(isinstance(v, str) for v in value)
    return {
        _STR: isinstance(value, str),
        _STR_LIST: is_str_list,
        "a string or a list of strings": isinstance(value, str) or is_str_list,
        "an object": isinstance(value, dict),
    }[kind]


def check_blob(qa_type: str, blob: Any, filename: str, *, allow_length_mismatch: bool = False) -> list[Problem]:
    """Problems of one parsed type file (empty list when it can be scored)."""
    if not isinstance(blob, dict):
        return [Problem(filename, "(top level)", "must be a JSON object with 'inputs' and 'responses'")]
    problems = [Problem(filename, key, "unknown field (allowed: inputs, responses, prompts)")
                for key in sorted(set(blob) - TOP_LEVEL_FIELDS)]  # fmt: skip
    for key in ("inputs", "responses"):
        if key not in blob:
            if not allow_length_mismatch:
                problems.append(Problem(filename, key, "missing"))
        elif not isinstance(blob[key], list):
            problems.append(Problem(filename, key, f"must be a list, not {type(blob[key]).__name__}"))
    if "prompts" in blob and not isinstance(blob["prompts"], list):
        problems.append(Problem(filename, "prompts", f"must be a list, not {type(blob['prompts']).__name__}"))
    if problems:
        return problems
    inputs, responses = blob.get("inputs", []), blob.get("responses", [])
    if len(inputs) != len(responses) and not allow_length_mismatch:
        problems.append(Problem(filename, "responses", f"{len(responses)} responses for {len(inputs)} inputs"))
    for i, item in enumerate(inputs):
        if len(problems) >= MAX_PROBLEMS_PER_FILE:
            problems.append(Problem(filename, "inputs", "further problems not listed"))
            break
        where = f"inputs[{i}]"
        if not isinstance(item, dict):
            problems.append(Problem(filename, where, f"must be a JSON object, not {type(item).__name__}"))
            continue
        for name, kind in REQUIRED_FIELDS[qa_type].items():
            if name not in item:
                problems.append(Problem(filename, f"{where}.{name}", "missing"))
            elif not _is_type(item[name], kind):
                problems.append(Problem(filename, f"{where}.{name}", f"must be {kind}"))
        for name, kind in OPTIONAL_FIELDS.items():
            if name in item and name not in REQUIRED_FIELDS[qa_type] and not _is_type(item[name], kind):
                problems.append(Problem(filename, f"{where}.{name}", f"must be {kind}"))
        source = item.get("source")
        if isinstance(source, dict) and "paragraph_id" in source and not isinstance(source["paragraph_id"], str):
            problems.append(Problem(filename, f"{where}.source.paragraph_id", "must be a string"))
        if qa_type in ("multiple_choice", "list") and item.get("options") == []:
            problems.append(Problem(filename, f"{where}.options", "must not be empty"))
    return problems


def load_submission_dir(
    path: str | os.PathLike, name: str | None = None, *, allow_length_mismatch: bool = False
) -> Submission:
    """Read and check a harness output folder; raise :class:`SubmissionError` listing every problem."""
    folder = Path(path)
    submission = Submission(name or folder.name, folder)
    if not folder.is_dir():
        raise SubmissionError([Problem(str(folder), "(folder)", "is not a directory")])
    problems: list[Problem] = []
    for qa_type, filename in QA_FILES.items():
        file = folder / filename
        if not file.is_file():
            submission.notes.append(f"{filename} not found – skipping {qa_type}")
            continue
        try:
            blob = json_loads(utf8_text(file.read_bytes(), byte_order_mark=False))
        except NotUtf8 as exc:
            problems.append(Problem(filename, "(file)", f"line {exc.line}: {exc}"))
            continue
        except json.JSONDecodeError as exc:
            problems.append(Problem(filename, "(file)", f"not valid JSON: {exc}"))
            continue
        except OSError as exc:
            problems.append(Problem(filename, "(file)", f"unreadable: {exc.strerror or exc}"))
            continue
        refused = refused_value(blob)  # NaN, 1e400, a huge integer or a key given twice, wherever it sits
        if refused is not None:
            problems.append(Problem(filename, place(refused[0]) or "(top level)", refused[1]))
            continue
        file_problems = check_blob(qa_type, blob, filename, allow_length_mismatch=allow_length_mismatch)
        if file_problems:
            problems.extend(file_problems)
            continue
        inputs, responses = blob.get("inputs", []), blob.get("responses", [])
        if len(inputs) != len(responses):
            submission.notes.append(f"{filename}: {len(responses)} responses for {len(inputs)} inputs – {qa_type} "
                                    "scores 0 as in the public scorer (its inputs still count in the IDF)")  # fmt: skip
        submission.inputs[qa_type] = inputs
        submission.responses[qa_type] = responses
    if not problems and not submission.inputs:
        problems.append(Problem(str(folder), "(folder)", f"none of the result files {', '.join(QA_FILES.values())}"))
    if problems:
        raise SubmissionError([Problem(str(folder / p.file) if p.file in QA_FILES.values() else p.file,
                                       p.field, p.message) for p in problems])  # fmt: skip
    return submission
