"""Exporting a nugget study's human labels: the labels as JSONL in the portal's label format (what
``nugget_eval --labels`` reads) or as CSV, and each answer's sentence marks as CSV.

Rows come from the report selectors (:func:`ranking.selectors.studies.study_nugget_labels`, ``study_sentence_marks``), so
an export and a report never disagree; rankers appear under their pseudonym unless ``identities`` is asked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

import pandas as pd

from portal import csv_cells
from portal.errors import DomainError
from portal.iterables import chunked
from ranking.models import Study
from ranking.selectors.studies import study_nugget_labels, study_sentence_marks

NUGGET_FORMATS = ("nugget-labels", "nugget-csv", "sentence-marks")
LABEL_COLUMNS = [
    "study",
    "item_uid",
    "system",
    "is_reference",
    "labeller",
    "slot",
    "nugget_id",
    "importance",
    "nugget_text",
    "label",
    "submitted_at",
]
MARK_COLUMNS = [
    "study",
    "item_uid",
    "system",
    "is_reference",
    "labeller",
    "slot",
    "n_sentences",
    "n_marked",
    "wrong_sentences",
    "unsupported_sentences",
]


#: Rows written at a time to a streamed export.
EXPORT_CHUNK = 5000


def nugget_export_chunks(*, study: Study, fmt: str, identities: bool = False) -> Iterator[bytes]:
    """One of :data:`NUGGET_FORMATS`, a few thousand rows at a time, for a streamed download: a large study has a
    million labels (``bench/bench_reports.py --nuggets``). Refused at once, before any byte: a study that asked for
    no nugget labels, an unknown format."""
    if not study.ask_nuggets:
        raise DomainError("this study did not ask for nugget labels", code="no_nugget_labels")
    if fmt == "nugget-labels":
        return _jsonl_chunks(study_nugget_labels(study, identities=identities))
    if fmt == "nugget-csv":
        rows = ({**row, "study": study.name} for row in study_nugget_labels(study, identities=identities))
        return _csv_chunks(rows, LABEL_COLUMNS)
    if fmt == "sentence-marks":
        marks = (
            {
                **row,
                "study": study.name,
                "n_marked": len(row["marked"]),
                # 0-based positions in the answer's stored sentences, as the API takes them
                "wrong_sentences": " ".join(map(str, row["wrong"])),
                "unsupported_sentences": " ".join(map(str, row["unsupported"])),
            }
            for row in study_sentence_marks(study, identities=identities)
        )
        return _csv_chunks(marks, MARK_COLUMNS)
    raise DomainError(f"unknown format {fmt!r}; use one of {', '.join(NUGGET_FORMATS)}")


def _jsonl_chunks(rows: Iterable[dict]) -> Iterator[bytes]:
    """The portal's label format (what ``nugget_eval --labels`` reads), one line per label."""
    for batch in chunked(rows, EXPORT_CHUNK):
        lines = (
            json.dumps(
                {key: row[key] for key in ("item_uid", "system", "nugget_id", "label", "labeller")},
                ensure_ascii=False,
            )
            + "\n"
            for row in batch
        )
        yield "".join(lines).encode("utf-8")


def _csv_chunks(rows: Iterable[dict], columns: list[str]) -> Iterator[bytes]:
    """CSV with the header once, cells guarded against spreadsheet formulas, written a batch at a time (each
    batch as pandas writes it, so the whole reads as one frame written at once)."""
    header = True
    for batch in chunked(rows, EXPORT_CHUNK):
        frame = pd.DataFrame(batch, columns=columns)
        yield csv_cells.guard_frame(frame).to_csv(index=False, header=header).encode("utf-8")
        header = False
    if header:  # no row at all: the header alone
        yield csv_cells.guard_frame(pd.DataFrame([], columns=columns)).to_csv(index=False).encode("utf-8")
