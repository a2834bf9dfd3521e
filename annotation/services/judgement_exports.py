"""Exports of vetting judgements: one row per judgement (CSV / Parquet) and SHROOM-style JSON per item.

A review set aside when an organizer sent its item back to review stays in the export (agreement figures count
it: it was a real judgement) with ``set_aside_at`` saying when; the item's current reviews have it empty.

Each review row names the guideline version it was made under (``guideline_version``: the version number of the
guideline of the row's benchmark and QA type), so agreement can be compared across versions.

Annotators appear as stable pseudonyms (``User.pseudonym``) unless an organizer asks for identities.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from django.utils import timezone

from annotation.exporters import tables
from annotation.models import Adjudication, Dispute, Review
from annotation.workflow import Stage, Verdict
from portal.audit import audit_export
from portal.errors import DomainError, NotFound
from portal.models import User

JUDGEMENT_COLUMNS = [
    "item_uid",
    "qa_type",
    "stage",
    "annotator",
    "verdict",
    "relevance",
    "comment",
    "created_at",
    "seconds",
    "guideline_version",
    "edited_at",
    "earlier_versions",
    "set_aside_at",
]
DISPUTE_COLUMNS = [
    "item_uid",
    "raised_by",
    "category",
    "text",
    "quote_text",
    "status",
    "resolver",
    "created_at",
    "resolved_at",
]
FORMATS = ("csv", "parquet", "shroom")


def _who(user: User | None, identities: bool) -> str:
    if user is None:
        return ""
    return user.email if identities else user.pseudonym


def _earlier_versions(review: Review) -> str:
    """What a review said before its author changed it, oldest first, in one cell ("" if never changed)."""
    return " | ".join(
        f"version {r.version}: {r.verdict}, relevance {r.relevance}"
        + (f", comment: {r.comment}" if r.comment else "")
        + f", replaced {r.replaced_at.isoformat()}"
        for r in review.revisions.all()
    )


def judgement_rows(*, identities: bool = False) -> list[dict]:
    """One row per judgement; a review changed by its author shows its newest version, with ``edited_at`` and the
    ``earlier_versions`` it replaced."""
    rows: list[dict[str, Any]] = []
    reviews = (
        Review.objects.filter(stage__in=[Stage.PRIMARY, Stage.SECONDARY])
        .select_related("item", "reviewer", "guideline")
        .prefetch_related("revisions")
    )
    for review in reviews.order_by("item_id", "created_at", "id"):
        rows.append(
            {
                "item_uid": review.item.uid,
                "qa_type": review.item.qa_type,
                "stage": review.stage,
                "annotator": _who(review.reviewer, identities),
                "verdict": review.verdict,
                "relevance": review.relevance,
                "comment": review.comment,
                "created_at": review.created_at.isoformat(),
                "seconds": review.server_seconds,
                # Text, so that the column stays whole numbers beside the adjudication rows' empty cells.
                "guideline_version": str(review.guideline.number) if review.guideline else None,
                "edited_at": review.edited_at.isoformat() if review.edited_at else None,
                "earlier_versions": _earlier_versions(review),
                "set_aside_at": review.superseded_at.isoformat() if review.superseded_at else None,
                "_order": (review.item_id, review.created_at),
            }
        )
    for adj in Adjudication.objects.select_related("item", "adjudicator").order_by("item_id", "created_at", "id"):
        rows.append(
            {
                "item_uid": adj.item.uid,
                "qa_type": adj.item.qa_type,
                "stage": "adjudication",
                "annotator": _who(adj.adjudicator, identities),
                "verdict": adj.verdict,
                "relevance": adj.relevance,
                "comment": adj.reason,
                "created_at": adj.created_at.isoformat(),
                "seconds": None,
                "guideline_version": None,
                "edited_at": None,
                "earlier_versions": "",
                "set_aside_at": None,
                "_order": (adj.item_id, adj.created_at),
            }
        )
    rows.sort(key=lambda row: row["_order"])  # per item, in the order the judgements were made
    for row in rows:
        del row["_order"]
    return rows


def dispute_rows(*, identities: bool = False) -> list[dict]:
    return [
        {
            "item_uid": d.item.uid,
            "raised_by": _who(d.raised_by, identities),
            "category": d.category,
            "text": d.text,
            "quote_text": d.quote_text,
            "status": d.status,
            "resolver": _who(d.resolver, identities),
            "created_at": d.created_at.isoformat(),
            "resolved_at": d.resolved_at.isoformat() if d.resolved_at else None,
        }
        for d in Dispute.objects.select_related("item", "raised_by", "resolver").order_by("item_id", "created_at", "id")
    ]


def shroom_records(rows: list[dict]) -> list[dict]:
    """Per item: each reviewer's verdict, the majority label (ties → null), and the share who said incorrect.
    Adjudications are reported beside the labels, not counted as a vote."""
    by_item: dict[str, dict] = {}
    for row in rows:
        entry = by_item.setdefault(
            row["item_uid"],
            {"item_uid": row["item_uid"], "qa_type": row["qa_type"], "labels": {}, "adjudication": None},
        )
        if row["stage"] == "adjudication":
            entry["adjudication"] = row["verdict"]
        else:
            entry["labels"][row["annotator"]] = row["verdict"]
    records = []
    for entry in by_item.values():
        votes = Counter(entry["labels"].values())
        ranked = votes.most_common()
        majority = ranked[0][0] if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]) else None
        n = sum(votes.values())
        records.append(
            {
                **entry,
                "majority_label": majority,
                "incorrect_share": round(votes[Verdict.INCORRECT] / n, 6) if n else None,
                "n_annotators": n,
            }
        )
    return records


# What the audit entry of a judgement export is about: every review, adjudication and dispute, not one object.
EXPORT_AUDIT_OBJECT = ("annotation.judgements", "all")


def _write_table(table: str, fmt: str, out_dir: Path, *, identities: bool) -> Path:
    """One table written to ``out_dir``: ``judgements`` (csv, parquet, or the SHROOM JSON per item) or
    ``disputes`` (csv, parquet)."""
    if table == "disputes":
        return tables.write_table(
            fmt, dispute_rows(identities=identities), DISPUTE_COLUMNS, out_dir / f"disputes.{fmt}"
        )
    rows = judgement_rows(identities=identities)
    if fmt == "shroom":
        path = out_dir / "judgements.shroom.json"
        path.write_text(json.dumps(shroom_records(rows), ensure_ascii=False, indent=2), encoding="utf-8")
        return path
    return tables.write_table(fmt, rows, JUDGEMENT_COLUMNS, out_dir / f"judgements.{fmt}")


def judgements_export(*, fmt: str, out_dir: Path, identities: bool = False, user: User | None = None) -> list[Path]:
    """Write the judgement (and dispute) tables, or the SHROOM JSON, to ``out_dir``; audited like every export of
    people's judgements (:func:`portal.audit.audit_export`), since it may carry identities."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tables_written = ("judgements",) if fmt == "shroom" else DOWNLOAD_TABLES
    paths = [_write_table(table, fmt, out_dir, identities=identities) for table in tables_written]
    audit_export(actor=user, obj=EXPORT_AUDIT_OBJECT, action="judgements_exported", fmt=fmt, identities=identities)
    return paths


# The downloads of the organizers' vetting page and the API: one table per file, each in these formats.
DOWNLOAD_TABLES = ("judgements", "disputes")
DOWNLOAD_FORMATS = {"judgements": FORMATS, "disputes": ("csv", "parquet")}
DOWNLOAD_TYPES = {"csv": "text/csv", "parquet": "application/vnd.apache.parquet", "shroom": "application/json"}
DOWNLOAD_EXTENSIONS = {"csv": "csv", "parquet": "parquet", "shroom": "shroom.json"}


def judgements_download_name(*, table: str, fmt: str, identities: bool, on: date) -> str:
    """A file name that says what the file holds, and whether people are named in it, so a file with e-mail
    addresses is never taken for the pseudonymised one: ``judgements-pseudonymised-2026-12-06.csv``,
    ``disputes-with-identities-2026-12-06.parquet``."""
    who = "with-identities" if identities else "pseudonymised"
    return f"{table}-{who}-{on.isoformat()}.{DOWNLOAD_EXTENSIONS[fmt]}"


def judgements_download(*, table: str, fmt: str, identities: bool, user: User) -> tuple[bytes, str, str]:
    """One table as a download (bytes, file name, content type): the same files the command writes, CSV guarded
    against spreadsheet formulas, and audited as every export of people's judgements is (``judgements_exported``
    or ``disputes_exported``, with the format and whether identities were in it)."""
    if table not in DOWNLOAD_TABLES:
        raise NotFound(f"unknown table {table!r}; use one of {', '.join(DOWNLOAD_TABLES)}")
    if fmt not in DOWNLOAD_FORMATS[table]:
        raise DomainError(
            f"the {table} table comes as {', '.join(DOWNLOAD_FORMATS[table])}, not {fmt!r}", code="invalid_format"
        )
    with tempfile.TemporaryDirectory(prefix="judgements-") as folder:
        data = _write_table(table, fmt, Path(folder), identities=identities).read_bytes()
    audit_export(actor=user, obj=EXPORT_AUDIT_OBJECT, action=f"{table}_exported", fmt=fmt, identities=identities)
    name = judgements_download_name(table=table, fmt=fmt, identities=identities, on=timezone.localdate())
    return data, name, DOWNLOAD_TYPES[fmt]
