"""Exporting a nugget study's human labels: the labels as JSONL in the portal's label format (what
``nugget_eval --labels`` reads) or as CSV, and each answer's sentence marks as CSV.

Rows come from the report selectors (:func:`ranking.selectors.study_nugget_labels`, ``study_sentence_marks``), so
an export and a report never disagree; rankers appear under their pseudonym unless ``identities`` is asked for.
"""

from __future__ import annotations

import json

import pandas as pd

from portal import csv_cells
from portal.errors import DomainError
from ranking.models import Study
from ranking.selectors import study_nugget_labels, study_sentence_marks

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


def nugget_export(*, study: Study, fmt: str, identities: bool = False) -> bytes:
    """One of :data:`NUGGET_FORMATS` as bytes; refused for a study that asked for no nugget labels."""
    if not study.ask_nuggets:
        raise DomainError("this study did not ask for nugget labels", code="no_nugget_labels")
    if fmt == "nugget-labels":
        lines = [
            json.dumps(
                {
                    "item_uid": row["item_uid"],
                    "system": row["system"],
                    "nugget_id": row["nugget_id"],
                    "label": row["label"],
                    "labeller": row["labeller"],
                },
                ensure_ascii=False,
            )
            for row in study_nugget_labels(study, identities=identities)
        ]
        return "".join(line + "\n" for line in lines).encode("utf-8")
    if fmt == "nugget-csv":
        rows = [{**row, "study": study.name} for row in study_nugget_labels(study, identities=identities)]
        frame = pd.DataFrame(rows, columns=LABEL_COLUMNS)
    elif fmt == "sentence-marks":
        rows = [
            {
                **row,
                "study": study.name,
                "n_marked": len(row["marked"]),
                # 0-based positions in the answer's stored sentences, as the API takes them
                "wrong_sentences": " ".join(map(str, row["wrong"])),
                "unsupported_sentences": " ".join(map(str, row["unsupported"])),
            }
            for row in study_sentence_marks(study, identities=identities)
        ]
        frame = pd.DataFrame(rows, columns=MARK_COLUMNS)
    else:
        raise DomainError(f"unknown format {fmt!r}; use one of {', '.join(NUGGET_FORMATS)}")
    return csv_cells.guard_frame(frame).to_csv(index=False).encode("utf-8")
