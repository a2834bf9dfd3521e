"""Releases frozen with nuggets: the snapshot per item, nuggets.jsonl in every export and its manifest, the
nuggets-only export, verification, and releases frozen before (or without) nuggets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import QAItem
from annotation.services.imports import items_import
from annotation.services.nugget_files import nuggets_import
from annotation.services.nuggets import nugget_next, nugget_validate
from annotation.services.release_nuggets import NUGGETS_FILE
from annotation.services.releases import EXPORT_FORMATS, release_export, release_freeze, release_verify
from portal.errors import Conflict, DomainError

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db

NUGGETS = [
    {"id": "n1", "text": "Fact “one”.", "importance": "vital"},
    {"id": "n2", "text": "No.", "importance": "avoid"},
]


@pytest.fixture
def released(organizer, make_user):
    """Three releasable items; the first has validated nuggets, the second only a draft, the third none."""
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    items = list(QAItem.objects.filter(qa_type="short_answer").order_by("pk")[:3])
    QAItem.objects.filter(pk__in=[i.pk for i in items]).update(
        status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary"
    )
    nuggets_import(source=[json.dumps({"item_uid": items[0].uid, "nuggets": NUGGETS})], name="a.jsonl", actor=organizer)
    validator = make_user("reviewer")
    nugget_validate(task_id=nugget_next(person=validator, stage="validate").pk, person=validator)
    nuggets_import(source=[json.dumps({"item_uid": items[1].uid, "nuggets": NUGGETS})], name="b.jsonl", actor=organizer)
    return items


def test_freeze_with_nuggets_snapshots_validated_lists(released, tmp_path):
    release = release_freeze(name="nug", with_nuggets=True)
    assert release.with_nuggets
    frozen = dict(release.items.values_list("uid", "nuggets"))
    assert frozen[released[0].uid] == {"version": 1, "nuggets": NUGGETS}
    assert frozen[released[1].uid] is None and frozen[released[2].uid] is None
    for fmt in EXPORT_FORMATS:
        assert NUGGETS_FILE in release.manifests[fmt]
        folder = tmp_path / fmt
        names = {p.name for p in release_export(release=release, fmt=fmt, out_dir=folder)}
        assert NUGGETS_FILE in names
        assert release_verify(release=release, folder=folder, fmt=fmt) == []
    lines = (tmp_path / "jsonl" / NUGGETS_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [{"item_uid": released[0].uid, "nuggets": NUGGETS, "version": 1}]
    only = tmp_path / "only"
    assert [p.name for p in release_export(release=release, fmt="nuggets", out_dir=only)] == [NUGGETS_FILE]
    assert release_verify(release=release, folder=only, fmt="nuggets") == []
    (only / NUGGETS_FILE).write_text("tampered\n")
    assert "differs" in release_verify(release=release, folder=only, fmt="nuggets")[0]


def test_freeze_without_nuggets_is_as_before(released, tmp_path):
    release = release_freeze(name="plain")
    assert not release.with_nuggets
    assert all(NUGGETS_FILE not in files for files in release.manifests.values())
    assert set(release.items.values_list("nuggets", flat=True)) == {None}
    release_export(release=release, fmt="csv", out_dir=tmp_path)
    assert release_verify(release=release, folder=tmp_path) == []
    with pytest.raises(DomainError):
        release_export(release=release, fmt="nuggets", out_dir=tmp_path / "n")
    # Freezing again with nuggets is a different release (a new version), then identical again is refused.
    assert release_freeze(name="plain", with_nuggets=True).version == 2
    with pytest.raises(Conflict):
        release_freeze(name="plain", with_nuggets=True)


def test_commands_freeze_export_and_verify_nuggets(released, tmp_path, capsys):
    call_command("freeze_release", "cmd", "--with-nuggets")
    call_command("export_release", "cmd", "--format", "nuggets", "--out", str(tmp_path))
    assert (tmp_path / NUGGETS_FILE).exists()
    call_command("verify_release", "cmd", str(tmp_path), "--format", "nuggets")
    assert "matches" in capsys.readouterr().out
    (tmp_path / NUGGETS_FILE).write_text("")
    with pytest.raises(CommandError):
        call_command("verify_release", "cmd", str(tmp_path), "--format", "nuggets")


def test_release_page_counts_items_with_nuggets_and_serves_file(released, organizer_client):
    release = release_freeze(name="page", with_nuggets=True)
    page = organizer_client.get(f"/releases/{release.label}/")
    assert "1 of 3 items has validated nuggets" in page.content.decode()
    download = organizer_client.get(f"/releases/{release.label}/download/nuggets/")
    assert download.status_code == 200 and json.loads(download.content)["item_uid"] == released[0].uid
    plain = release_freeze(name="page2")
    assert "Not frozen with this release" in organizer_client.get(f"/releases/{plain.label}/").content.decode()
    assert organizer_client.get(f"/releases/{plain.label}/download/nuggets/").status_code == 404


def test_the_nuggets_only_export_copies_the_file_the_freeze_kept(released, tmp_path, monkeypatch):
    from annotation.services import releases

    release = release_freeze(name="kept-nuggets", with_nuggets=True)
    monkeypatch.setattr(releases, "release_entries", lambda *a, **k: pytest.fail("written afresh, not copied"))
    (path,) = release_export(release=release, fmt="nuggets", out_dir=tmp_path)
    assert path.name == NUGGETS_FILE and release_verify(release=release, folder=tmp_path, fmt="nuggets") == []


def test_the_nuggets_only_export_reads_only_the_nuggets_file(released, tmp_path, monkeypatch):
    """The nuggets file is checked on its own: another kept file of the folder that changed does not stop the copy."""
    from django.conf import settings

    from annotation.services import releases

    release = release_freeze(name="kept-nuggets-alone", with_nuggets=True)
    other = next(
        p for p in (Path(settings.RELEASE_FILES_DIR) / str(release.pk) / "jsonl").iterdir() if p.name != NUGGETS_FILE
    )
    other.write_bytes(b"changed")
    monkeypatch.setattr(releases, "release_entries", lambda *a, **k: pytest.fail("written afresh, not copied"))
    (path,) = release_export(release=release, fmt="nuggets", out_dir=tmp_path)
    assert release_verify(release=release, folder=tmp_path, fmt="nuggets") == []
