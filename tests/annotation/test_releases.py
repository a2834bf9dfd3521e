"""Releases: selection rule edge cases, immutability through every door, byte-stable export, round trip,
the seven files' schema, the composition report, manifest verification."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, InternalError, connection, transaction

from annotation.models import Dispute, FeedbackNote, QAItem, Release, ReleaseItem
from annotation.qa_types import CLINIQLINK_FILES
from annotation.selectors.releases import composition_report
from annotation.services.imports import items_import
from annotation.services.releases import _data_files, release_export, release_freeze, release_verify
from portal.errors import DomainError
from tests.release_tables import release_tables_wipe
from tests.reviews import done_review

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "cliniqlink-sample"

pytestmark = pytest.mark.django_db


def _finalize(item: QAItem, *, verdict="correct", relevance=5.0, status="verified", source="primary") -> QAItem:
    QAItem.objects.filter(pk=item.pk).update(
        status=status, final_verdict=verdict, final_relevance=relevance, final_source=source
    )
    item.refresh_from_db()
    return item


@pytest.fixture
def sample_items():
    items_import(paths=[SAMPLE])
    return list(QAItem.objects.order_by("id"))


def test_default_rule_takes_verified_correct_relevance_5_without_open_issues(sample_items, reviewer):
    good, adjudicated, rel4, incorrect, unverified, open_dispute, resolved_dispute, open_note, closed_note = (
        sample_items[:9]
    )
    for item in (good, open_dispute, resolved_dispute, open_note, closed_note):
        _finalize(item)
    _finalize(adjudicated, source="adjudication")
    _finalize(rel4, relevance=4.0)
    _finalize(incorrect, verdict="incorrect", status="rejected")
    _finalize(unverified, status="reviewed")
    Dispute.objects.create(item=open_dispute, raised_by=reviewer, category="other", text="?")
    Dispute.objects.create(item=resolved_dispute, raised_by=reviewer, category="other", text="?", status="rejected")
    FeedbackNote.objects.create(item=open_note, author=reviewer, text="typo")
    FeedbackNote.objects.create(item=closed_note, author=reviewer, text="typo", status="closed")
    release = release_freeze(name="bench")
    uids = set(release.items.values_list("uid", flat=True))
    assert uids == {good.uid, adjudicated.uid, resolved_dispute.uid, closed_note.uid}
    assert release.rule["min_relevance"] == 5.0 and release.rule["exclude_open_issues"] is True
    relaxed = release_freeze(name="bench", rule={"min_relevance": 4})
    assert relaxed.version == 2 and rel4.uid in set(relaxed.items.values_list("uid", flat=True))


def test_unknown_rule_parameter_and_empty_selection_are_refused(sample_items):
    with pytest.raises(DomainError, match="field .min_relevence.: unknown parameter"):
        release_freeze(name="x", rule={"min_relevence": 4})
    with pytest.raises(DomainError, match="selects no items"):
        release_freeze(name="x")
    assert Release.objects.count() == 0


def test_release_is_a_snapshot_that_later_item_edits_do_not_change(sample_items, tmp_path):
    for item in sample_items:
        _finalize(item)
    release = release_freeze(name="snap")
    release_export(release=release, fmt="cliniqlink", out_dir=tmp_path / "a")
    first = sample_items[0]
    QAItem.objects.filter(pk=first.pk).update(question="Edited after the freeze", final_relevance=1, status="held")
    release_export(release=release, fmt="cliniqlink", out_dir=tmp_path / "b")
    for name in CLINIQLINK_FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert release_verify(release=release, folder=tmp_path / "b") == []


def test_database_refuses_to_change_or_delete_a_frozen_release(sample_items):
    for item in sample_items:
        _finalize(item)
    release = release_freeze(name="locked")
    for attempt in (
        lambda: Release.objects.filter(pk=release.pk).update(note="changed"),
        lambda: ReleaseItem.objects.filter(release=release).update(final_relevance=1),
        lambda: ReleaseItem.objects.filter(release=release).delete(),
        lambda: release.save(),
    ):
        with pytest.raises((InternalError, IntegrityError), match="releases are immutable"), transaction.atomic():
            attempt()
    release.refresh_from_db()
    assert release.note == "" and release.items.count() == 35


def test_admin_and_api_offer_no_way_to_change_a_release(sample_items, organizer_client, organizer):
    organizer.is_staff = True
    organizer.save()
    for item in sample_items:
        _finalize(item)
    release = release_freeze(name="api")
    url = f"/api/releases/{release.label}/"
    assert organizer_client.get(url).json()["item_count"] == 35
    for method in ("put", "patch", "delete"):
        assert getattr(organizer_client, method)(url, {"note": "x"}, content_type="application/json").status_code == 405
    assert organizer_client.post(f"/admin/annotation/release/{release.pk}/change/", {"note": "x"}).status_code == 403
    assert organizer_client.post(f"/admin/annotation/release/{release.pk}/delete/", {"post": "yes"}).status_code == 403
    release.refresh_from_db()
    assert release.note == ""


def test_cliniqlink_export_holds_the_sample_records_unchanged_in_order(sample_items, tmp_path):
    # The public sample's own formatting varies from record to record (key order, blank lines), so the
    # export is compared by content; its own formatting is canonical (see exporters/cliniqlink.py).
    for item in sample_items:
        _finalize(item)
    release = release_freeze(name="sample")
    paths = release_export(release=release, fmt="cliniqlink", out_dir=tmp_path)
    assert sorted(p.name for p in paths) == sorted([*CLINIQLINK_FILES, "CARD.md"])  # the data, and its card
    for name in CLINIQLINK_FILES:
        assert json.loads((tmp_path / name).read_text()) == json.loads((SAMPLE / name).read_text()), name


@pytest.mark.parametrize("file_name", list(CLINIQLINK_FILES))
def test_each_exported_file_has_the_sample_schema_and_type_names(sample_items, tmp_path, file_name):
    for item in sample_items:
        _finalize(item)
    release_export(release=release_freeze(name="schema"), fmt="cliniqlink", out_dir=tmp_path)
    exported = json.loads((tmp_path / file_name).read_text())
    sample = json.loads((SAMPLE / file_name).read_text())
    canonical = {
        "TF.json": ["question", "answer", "source", "type"],
        "MC.json": ["question", "correct_answer", "options", "source", "type"],
    }
    assert [set(r) for r in exported] == [set(r) for r in sample]
    if file_name in canonical:
        assert all(list(r) == canonical[file_name] for r in exported)
    assert {r["type"] for r in exported} == {CLINIQLINK_FILES[file_name].value}
    assert all(list(r["source"]) == ["isbn", "page", "paragraph_id"] for r in exported)


@pytest.mark.parametrize("fmt", ["cliniqlink", "csv", "parquet", "jsonl"])
def test_export_is_byte_stable_and_matches_the_manifest(sample_items, tmp_path, fmt):
    for item in sample_items:
        _finalize(item)
    release = release_freeze(name="stable")
    first = release_export(release=release, fmt=fmt, out_dir=tmp_path / "1")
    second = release_export(release=release, fmt=fmt, out_dir=tmp_path / "2")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    assert release_verify(release=release, folder=tmp_path / "1", fmt=fmt) == []


def test_round_trip_into_an_empty_portal_gives_identical_bytes(sample_items, tmp_path):
    for item in sample_items:
        _finalize(item)
    release_export(release=release_freeze(name="trip"), fmt="cliniqlink", out_dir=tmp_path / "out1")
    release_tables_wipe()  # an empty portal: the release tables only as a superuser can empty them
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("TRUNCATE annotation_qaitem, annotation_importbatch CASCADE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")  # as Django's own (the freeze below checks at commit)
    items_import(paths=[tmp_path / "out1"])
    assert QAItem.objects.count() == 35
    release = release_freeze(name="trip", rule={"statuses": [], "final_verdict": None, "min_relevance": None})
    release_export(release=release, fmt="cliniqlink", out_dir=tmp_path / "out2")
    for name in CLINIQLINK_FILES:
        assert (tmp_path / "out1" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes()


def test_verify_detects_a_changed_byte_and_a_missing_file(sample_items, tmp_path):
    for item in sample_items:
        _finalize(item)
    release = release_freeze(name="verify")
    call_command("export_release", "verify", "--out", str(tmp_path))
    call_command("verify_release", "verify", str(tmp_path))
    path = tmp_path / "MC.json"
    data = bytearray(path.read_bytes())
    data[10] = ord("X") if data[10] != ord("X") else ord("Y")
    path.write_bytes(bytes(data))
    with pytest.raises(CommandError, match="MC.json: sha256"):
        call_command("verify_release", "verify", str(tmp_path))
    (tmp_path / "TF.json").unlink()
    assert any("TF.json: missing" in p for p in release_verify(release=release, folder=tmp_path, fmt="cliniqlink"))


def test_composition_report_counts_a_known_fixture(sample_items, make_user):
    reviewers = [make_user("reviewer"), make_user("reviewer")]
    tf = [i for i in sample_items if i.qa_type == "true_false"]
    mc = [i for i in sample_items if i.qa_type == "multiple_choice"]
    for item, relevance in zip(tf, [5, 5, 5, 4, 3], strict=True):
        _finalize(item, relevance=float(relevance))
    for item, relevance in zip(mc[:2], [5, 2], strict=True):
        _finalize(item, relevance=float(relevance))
    # Two independent reviews for TF items 0 (high) and 3 (low), and MC item 1 (low).
    for item in (tf[0], tf[3], mc[1]):
        for stage, who in zip(("primary", "secondary"), reviewers, strict=True):
            done_review(item, who, stage, "correct", 5, server_seconds=1)
    Dispute.objects.create(item=mc[4], raised_by=reviewers[0], category="other", text="?")
    report = composition_report()
    assert report["by_type"]["true_false"] == {
        "high": 3,
        "low": 2,
        "total": 5,
        "double_high": 1,
        "double_low": 1,
        "double_total": 2,
        "in_release": 0,
        "pct_double": 40.0,
    }
    assert report["by_type"]["multiple_choice"] == {
        "high": 1,
        "low": 1,
        "total": 2,
        "double_high": 0,
        "double_low": 1,
        "double_total": 1,
        "in_release": 0,
        "pct_double": 50.0,
    }
    assert report["totals"]["total"] == 7 and report["totals"]["double_total"] == 3
    assert report["totals"]["pct_double"] == round(100 * 3 / 7, 1)
    assert (report["disputes"], report["open_disputes"], report["feedback_notes"]) == (1, 1, 0)


def test_release_report_command_prints_json(sample_items, capsys):
    for item in sample_items:
        _finalize(item)
    release_freeze(name="rep")
    call_command("release_report", "rep", "--json")
    data = json.loads(capsys.readouterr().out)
    assert data["release"] == "rep@1" and data["totals"]["in_release"] == 35 and data["totals"]["high"] == 35


def test_release_pages_show_table_and_download_zip(sample_items, organizer_client):
    for item in sample_items:
        _finalize(item)
    organizer_client.post(
        "/releases/", {"name": "web", "min_relevance": 5, "final_verdict": "correct", "exclude_open_issues": "on"}
    )
    release = Release.objects.get(name="web")
    page = organizer_client.get(f"/releases/{release.label}/")
    assert page.status_code == 200 and release.checksum.encode() in page.content
    download = organizer_client.get(f"/releases/{release.label}/download/cliniqlink/")
    assert download["Content-Type"] == "application/zip"
    import io
    import zipfile

    names = zipfile.ZipFile(io.BytesIO(download.content)).namelist()
    assert (
        len(names) == 10  # the seven data files, the card, the manifest and the README
        and any(n.endswith("SHA256SUMS") for n in names)
        and any(n.endswith("README.txt") for n in names)
    )


@pytest.mark.django_db(transaction=True)
def test_a_large_release_hashed_and_exported_by_parallel_processes_has_the_serial_bytes(tmp_path, monkeypatch):
    """Past a few thousand items the freeze writes its formats, and the export its seven files, in forked
    processes: the manifests and the files are the ones one process writes, and the database work around them
    (the snapshot, the insert) goes on in the same transaction."""
    import portal.parallel

    items_import(paths=[SAMPLE])
    QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary")
    monkeypatch.setattr(portal.parallel, "PARALLEL_FROM_ROWS", 10**9)
    serial = release_freeze(name="serial", with_nuggets=True)
    monkeypatch.setattr(portal.parallel, "PARALLEL_FROM_ROWS", 0)
    forked = release_freeze(name="forked", with_nuggets=True)
    # the data files are byte for byte the serial ones (each release's card names its own version)
    assert _data_files(forked.manifests) == _data_files(serial.manifests) and forked.checksum == serial.checksum
    assert forked.items.count() == serial.items.count() == QAItem.objects.count()
    for fmt in ("cliniqlink", "csv", "parquet", "jsonl"):
        release_export(release=forked, fmt=fmt, out_dir=tmp_path / fmt)
        assert release_verify(release=forked, folder=tmp_path / fmt, fmt=fmt) == []
        for name, digest in _data_files(serial.manifests)[fmt].items():
            assert hashlib.sha256((tmp_path / fmt / name).read_bytes()).hexdigest() == digest, name
