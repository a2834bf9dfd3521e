"""Reader of the Mu-SHROOM JSON Lines shape for references and detector predictions (pure, strict).

One answer per line: ``id``, ``model_output_text``, ``soft_labels`` (``[{"start", "end", "prob"}]``) and optionally
``hard_labels`` (``[[start, end]]``; derived from the soft labels when absent, as the official scorer does), ``lang``
and ``model_input``. A reference must carry the text; a prediction may leave it out (its spans are checked against
the reference's text). Every refusal names the file, the line and the field (:mod:`records.jsonl`).

Missing labels are read as the official Mu-SHROOM scorer (SemEval 2025 Task 3; ``load_jsonl_file_to_records`` of
Helsinki-NLP/mu-shroom's ``participant_kit/scorer.py``) reads them. A prediction needs one of the two: without
``hard_labels`` they are recomputed from the soft labels (runs above 0.5, touching runs merged); without
``soft_labels`` each hard span becomes a soft run at probability 1 (its ``infer_soft_labels``); with neither it is
refused. A reference's soft labels are the annotators' shares and are never inferred: a reference without them is
refused (missing hard labels are derived from them, as SHROOM's scorers did). The official scorer decides per file
(a column of the file is there or not); here each line is read on its own, which gives the same on every file that
scorer reads (a file mixing lines with and without a label breaks it).
"""

from __future__ import annotations

from dataclasses import dataclass

from records.jsonl import InputFileError, Source, display_name, json_type, records, text_field

from .spans import hard_labels, inferred_soft_labels

MAX_ID = 200
MAX_TEXT = 100_000
MAX_RUNS = 10_000


@dataclass(frozen=True)
class SpanRecord:
    id: str
    line: int
    text: str | None
    soft_labels: list[dict]
    hard_labels: list[list[int]]


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and not isinstance(value, str)


def _offsets(start: object, end: object, length: int | None, display: str, line: int, field: str) -> tuple[int, int]:
    if not (_int(start) and _int(end)):
        raise InputFileError(display, "start and end must be whole numbers", line=line, field=field)
    assert isinstance(start, int) and isinstance(end, int)
    if start < 0 or end <= start:
        raise InputFileError(display, f"the span {start}-{end} is empty or negative", line=line, field=field)
    if length is not None and end > length:
        raise InputFileError(
            display, f"the span {start}-{end} ends after the text ({length} characters)", line=line, field=field
        )
    return start, end


def _soft(record: dict, length: int | None, display: str, line: int) -> list[dict]:
    if "soft_labels" not in record:
        raise InputFileError(display, "is missing", line=line, field="soft_labels")
    runs = record["soft_labels"]
    if not isinstance(runs, list):
        raise InputFileError(display, f"must be a list, not {json_type(runs)}", line=line, field="soft_labels")
    if len(runs) > MAX_RUNS:
        raise InputFileError(display, f"{len(runs)} runs; at most {MAX_RUNS}", line=line, field="soft_labels")
    out = []
    for index, run in enumerate(runs, start=1):
        field = f"soft_labels (entry {index})"
        if not isinstance(run, dict) or not {"start", "end", "prob"} <= set(run):
            raise InputFileError(display, "must be an object with start, end and prob", line=line, field=field)
        start, end = _offsets(run["start"], run["end"], length, display, line, field)
        prob = run["prob"]
        if isinstance(prob, bool) or not isinstance(prob, int | float) or isinstance(prob, str) or not 0 <= prob <= 1:
            raise InputFileError(display, "prob must be a number from 0 to 1", line=line, field=f"{field}.prob")
        out.append({"start": start, "end": end, "prob": float(prob)})
    return out


def _hard(record: dict, soft: list[dict], length: int | None, display: str, line: int) -> list[list[int]]:
    if "hard_labels" not in record:
        return hard_labels(soft)
    spans = record["hard_labels"]
    if not isinstance(spans, list) or len(spans) > MAX_RUNS:
        raise InputFileError(display, "must be a list of [start, end] pairs", line=line, field="hard_labels")
    out = []
    for index, span in enumerate(spans, start=1):
        field = f"hard_labels (entry {index})"
        if not isinstance(span, list) or len(span) != 2:
            raise InputFileError(display, "must be a [start, end] pair", line=line, field=field)
        out.append(list(_offsets(span[0], span[1], length, display, line, field)))
    return out


def _labels(
    record: dict, length: int | None, display: str, line: int, *, prediction: bool
) -> tuple[list[dict], list[list[int]]]:
    """The answer's soft and hard labels, a missing one inferred as the module docstring says."""
    if prediction and "soft_labels" not in record:
        if "hard_labels" not in record:
            raise InputFileError(
                display,
                "is missing, and so is hard_labels: a prediction needs one of the two",
                line=line,
                field="soft_labels",
            )
        hard = _hard(record, [], length, display, line)
        return inferred_soft_labels(hard), hard
    soft = _soft(record, length, display, line)
    return soft, _hard(record, soft, length, display, line)


def read_spans_jsonl(
    source: Source,
    *,
    name: str | None = None,
    require_text: bool = True,
    text_lengths: dict[str, int] | None = None,
    prediction: bool = False,
) -> dict[str, SpanRecord]:
    """id -> record. ``text_lengths`` (a prediction file's reference lengths): every id must be one of them and
    spans must fit that text; ids are then also required to cover all of them. ``prediction``: a detector's file,
    which may give hard labels only (soft labels are then inferred, as the official scorer does)."""
    display = display_name(source, name)
    found: dict[str, SpanRecord] = {}
    for line, record in records(source, display):
        raw_id = record.get("id")
        if _int(raw_id):
            record = {**record, "id": str(raw_id)}
        uid = text_field(record, "id", display, line, limit=MAX_ID)
        if uid in found:
            raise InputFileError(
                display, f"id {uid!r} is already given on line {found[uid].line}", line=line, field="id"
            )
        text = None
        if require_text or "model_output_text" in record:
            text = text_field(record, "model_output_text", display, line, limit=MAX_TEXT, strip=False)
        length = len(text) if text is not None else None
        if text_lengths is not None:
            if uid not in text_lengths:
                raise InputFileError(display, f"no reference answer has id {uid!r}", line=line, field="id")
            if text is not None and length != text_lengths[uid]:
                raise InputFileError(
                    display, "is not the reference's text (the lengths differ)", line=line, field="model_output_text"
                )
            length = text_lengths[uid]
        found[uid] = SpanRecord(uid, line, text, *_labels(record, length, display, line, prediction=prediction))
    if not found:
        raise InputFileError(display, "has no answers")
    if text_lengths is not None:
        missing = sorted(set(text_lengths) - set(found))
        if missing:
            raise InputFileError(
                display, f"has no prediction for {len(missing)} reference answer(s), e.g. id {missing[0]!r}"
            )
    return found
