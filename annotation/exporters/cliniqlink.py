"""The seven-file ClinIQLink layout, written exactly as the public sample is formatted.

Stable bytes: records keep the order given (the release's order), keys follow the sample's order for each type
(``question``, the type's fields, ``source``, ``type``; any other imported key after them, sorted), and the
JSON is indented by 4 with UTF-8 text and no trailing newline, like the sample files. PostgreSQL's ``jsonb``
does not keep key order, which is why the order is imposed here rather than taken from storage.
"""

from __future__ import annotations

import json
from pathlib import Path

from annotation.qa_types import CLINIQLINK_FILES, QAType
from portal.parallel import fork_map, processes_for

KEY_ORDER: dict[str, list[str]] = {
    QAType.TRUE_FALSE: ["question", "answer", "source", "type"],
    QAType.MULTIPLE_CHOICE: ["question", "correct_answer", "options", "source", "type"],
    QAType.LIST: ["question", "answer", "options", "source", "type"],
    QAType.SHORT: ["question", "answer", "source", "type"],
    QAType.SHORT_INVERSE: ["question", "answer", "false_answer", "incorrect_explanation", "source", "type"],
    QAType.MULTI_HOP: ["question", "answer", "reasoning", "source", "type"],
    QAType.MULTI_HOP_INVERSE: ["question", "answer", "reasoning", "incorrect_reasoning_step", "source", "type"],
}
SOURCE_ORDER = ["isbn", "page", "paragraph_id"]


def ordered_record(record: dict) -> dict:
    """The record with keys in the sample's order for its type (unknown keys last, sorted)."""
    order = KEY_ORDER.get(record.get("type"), [])
    out = {key: record[key] for key in order if key in record}
    for key in sorted(set(record) - set(order)):
        out[key] = record[key]
    if isinstance(out.get("source"), dict):
        source = out["source"]
        out["source"] = {key: source[key] for key in SOURCE_ORDER if key in source} | {
            key: source[key] for key in sorted(set(source) - set(SOURCE_ORDER))
        }
    return out


def dumps(records: list) -> bytes:
    """The file's bytes; ``records`` as dicts, or as their JSON text (parsed here, in the process that writes)."""
    parsed = (r if isinstance(r, dict) else json.loads(r) for r in records)
    return json.dumps([ordered_record(r) for r in parsed], ensure_ascii=False, indent=4).encode("utf-8")


def write(records_by_type: dict[str, list], out_dir: Path) -> list[Path]:
    """Write all seven files (an empty array where a type has no items) and return their paths.

    A large release's files are written by parallel processes: an indented ``json.dumps`` is pure Python."""
    out_dir.mkdir(parents=True, exist_ok=True)

    def write_file(names: tuple[str, str]) -> Path:
        file_name, qa_type = names
        path = out_dir / file_name
        path.write_bytes(dumps(records_by_type.get(qa_type, [])))
        return path

    rows = sum(len(records) for records in records_by_type.values())
    return fork_map(write_file, list(CLINIQLINK_FILES.items()), processes=processes_for(rows))
