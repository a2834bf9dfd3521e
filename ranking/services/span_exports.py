"""Exporting a span study's hallucination spans: Mu-SHROOM JSON Lines (one line per answer some physician read,
with soft and hard labels and each physician's spans) and CSV / Parquet with one row per marked span.

Rows come from :func:`ranking.selectors.spans.study_span_labels`, so exports, detector scores and the report never
disagree. Physicians appear under their pseudonym unless ``identities`` is asked for; with ``blind_systems`` the
systems (the reference answer included) become "system 1", "system 2"… in the order of their names.
"""

from __future__ import annotations

import io
import json

import pandas as pd

from portal import csv_cells
from portal.errors import DomainError
from ranking.models import Study
from ranking.selectors.spans import AnswerSpans, study_span_labels

SPAN_FORMATS = ("spans-jsonl", "spans-csv", "spans-parquet")
SPAN_COLUMNS = [
    "study",
    "id",
    "item_uid",
    "qa_type",
    "lang",
    "system",
    "annotator",
    "start",
    "end",
    "kind",
    "note",
    "marked_text",
    "answer_length",
]


def _system_names(answers: list[AnswerSpans], blind: bool) -> dict[str, str]:
    names = sorted({a.system for a in answers})
    if not blind:
        return {name: name for name in names}
    return {name: f"system {n}" for n, name in enumerate(names, start=1)}


def span_records(study: Study, *, identities: bool = False, blind_systems: bool = False) -> list[dict]:
    """The Mu-SHROOM records of the answers at least one physician read, in queue order."""
    answers = [a for a in study_span_labels(study, identities=identities) if a.n_annotators]
    systems = _system_names(answers, blind_systems)
    records = []
    for a in answers:
        record: dict[str, object] = {
            "id": a.answer_key,
            "lang": a.lang,
            "model_input": a.question,
            "model_output_text": a.text,
            "soft_labels": a.soft_labels,
            "hard_labels": a.hard_labels,
            "system": systems[a.system],
        }
        if not blind_systems:
            record["is_reference"] = a.is_reference
        record["annotations"] = [
            {
                "annotator": annotation.label,
                "spans": [{"start": s.start, "end": s.end, "kind": s.kind, "note": s.note} for s in annotation.spans],
            }
            for annotation in a.annotations
        ]
        records.append(record)
    return records


def span_rows(study: Study, *, identities: bool = False, blind_systems: bool = False) -> pd.DataFrame:
    """One row per marked span, columns :data:`SPAN_COLUMNS` (answers read and left unmarked have no row)."""
    answers = study_span_labels(study, identities=identities)
    systems = _system_names([a for a in answers if a.n_annotators], blind_systems)
    rows = [
        {
            "study": study.name,
            "id": a.answer_key,
            "item_uid": a.item_uid,
            "qa_type": a.qa_type,
            "lang": a.lang,
            "system": systems[a.system],
            "annotator": annotation.label,
            "start": s.start,
            "end": s.end,
            "kind": s.kind,
            "note": s.note,
            "marked_text": a.text[s.start : s.end],
            "answer_length": len(a.text),
        }
        for a in answers
        for annotation in a.annotations
        for s in annotation.spans
    ]
    return pd.DataFrame(rows, columns=SPAN_COLUMNS)


def span_export(*, study: Study, fmt: str, identities: bool = False, blind_systems: bool = False) -> bytes:
    """One of :data:`SPAN_FORMATS` as bytes; refused for a study that did not ask for spans."""
    if not study.ask_spans:
        raise DomainError("this study did not ask for hallucination spans", code="no_spans")
    if fmt == "spans-jsonl":
        records = span_records(study, identities=identities, blind_systems=blind_systems)
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
    if fmt not in SPAN_FORMATS:
        raise DomainError(f"unknown format {fmt!r}; use one of {', '.join(SPAN_FORMATS)}")
    frame = span_rows(study, identities=identities, blind_systems=blind_systems)
    if fmt == "spans-csv":
        return csv_cells.guard_frame(frame).to_csv(index=False).encode("utf-8")
    frame["start"] = frame["start"].astype("Int64")
    frame["end"] = frame["end"].astype("Int64")
    frame["answer_length"] = frame["answer_length"].astype("Int64")
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False, engine="pyarrow")
    return buffer.getvalue()
