"""Gold items in bulk: CSV or a JSON array with ``uid``, ``expected_verdict``, and optionally ``planted_error``
(true/false, yes/no, 1/0) and ``note`` (what is wrong with a planted item; organizers only)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from annotation.models import QAItem
from annotation.workflow import Verdict
from portal.importing import ImportProblem, Limits, keyed_records, load_table, shown

REQUIRED = ("uid", "expected_verdict")
_TRUE, _FALSE = {"true", "yes", "1"}, {"false", "no", "0", ""}


@dataclass
class ParsedGold:
    uid: str
    expected_verdict: str
    planted_error: bool
    note: str
    record: int


def _flag(value, display: str, index: int) -> bool:
    if isinstance(value, bool) or value is None:
        return bool(value)
    text = str(value).strip().lower() if isinstance(value, str | int) else None
    if text in _TRUE | _FALSE:
        return text in _TRUE
    raise ImportProblem(display, f"{shown(value)} is not true or false", record=index, field="planted_error")


def parse_file(path: Path, limits: Limits, display: str | None = None) -> list[ParsedGold]:
    display = display or path.name
    records = load_table(path, limits, display, required=REQUIRED, key="gold")
    parsed = []
    # expected_verdict is checked against the verdicts below, with its own message, so only uid is required text.
    for index, record, uid in keyed_records(records, display, required=("uid",), model=QAItem, columns={"uid": "uid"}):
        verdict = record.get("expected_verdict")
        verdict = verdict.strip() if isinstance(verdict, str) else verdict
        if verdict not in Verdict.values:
            raise ImportProblem(
                display,
                f"{shown(verdict)} is not one of {', '.join(Verdict.values)}",
                record=index,
                field="expected_verdict",
            )
        note = record.get("note") or ""
        if not isinstance(note, str):
            raise ImportProblem(display, "must be text", record=index, field="note")
        planted = _flag(record.get("planted_error"), display, index)
        parsed.append(ParsedGold(uid, verdict, planted, note.strip(), index))
    return parsed
