"""The files a freeze wrote are kept and copied by exports, but only while they match the manifest byte for byte;
otherwise the export is written afresh from the frozen records, with the same bytes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.conf import settings

from annotation.models import QAItem
from annotation.services import releases
from annotation.services.imports import items_import
from annotation.services.releases import EXPORT_FORMATS, release_export, release_freeze, release_verify
from portal.errors import Conflict

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "cliniqlink-sample"

pytestmark = pytest.mark.django_db


@pytest.fixture
def verified_sample():
    items_import(paths=[SAMPLE])
    QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary")


def _kept(release) -> Path:
    return Path(settings.RELEASE_FILES_DIR) / str(release.pk)


def _no_fresh_writing(monkeypatch):
    """Make writing an export from the frozen records fail, so that a passing export must have copied."""

    def refuse(*args, **kwargs):
        raise AssertionError("the export was written afresh instead of copied")

    monkeypatch.setattr(releases, "release_entries", refuse)


def test_a_freeze_keeps_every_format_exactly_as_its_manifest(verified_sample):
    release = release_freeze(name="kept")
    for fmt in EXPORT_FORMATS:
        assert release_verify(release=release, folder=_kept(release) / fmt, fmt=fmt) == []
    assert sorted(p.name for p in _kept(release).iterdir()) == sorted(EXPORT_FORMATS)


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_an_export_copies_the_kept_files(verified_sample, tmp_path, monkeypatch, fmt):
    release = release_freeze(name="copied")
    _no_fresh_writing(monkeypatch)
    paths = release_export(release=release, fmt=fmt, out_dir=tmp_path)
    assert sorted(p.name for p in paths) == sorted(release.manifests[fmt])
    assert release_verify(release=release, folder=tmp_path, fmt=fmt) == []


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_without_kept_files_the_export_is_written_afresh_with_the_same_bytes(verified_sample, tmp_path, fmt):
    release = release_freeze(name="afresh")
    copied = release_export(release=release, fmt=fmt, out_dir=tmp_path / "copied")
    shutil.rmtree(_kept(release))
    written = release_export(release=release, fmt=fmt, out_dir=tmp_path / "written")
    assert {p.name: p.read_bytes() for p in copied} == {p.name: p.read_bytes() for p in written}
    assert release_verify(release=release, folder=tmp_path / "written", fmt=fmt) == []


def test_a_kept_file_that_changed_is_never_handed_out(verified_sample, tmp_path):
    release = release_freeze(name="tampered")
    kept_csv = _kept(release) / "csv" / "items.csv"
    kept_csv.write_bytes(kept_csv.read_bytes().replace(b"verified", b"VERIFIED", 1) + b"=1+1\n")
    (path,) = [p for p in release_export(release=release, fmt="csv", out_dir=tmp_path) if p.name == "items.csv"]
    assert release_verify(release=release, folder=tmp_path, fmt="csv") == []
    assert b"=1+1" not in path.read_bytes()


def test_a_kept_file_that_changes_while_it_is_copied_is_never_handed_out(verified_sample, tmp_path, monkeypatch):
    """What is hashed is the copy itself, so a kept file altered between a check and the copy cannot slip through."""
    from annotation.services import release_files

    release = release_freeze(name="changed-in-flight")
    real_copy = shutil.copyfile

    def copy_then_change(source, target):
        real_copy(source, target)
        Path(target).write_bytes(Path(target).read_bytes() + b"=1+1\n")  # as if the source changed mid-copy
        return target

    monkeypatch.setattr(release_files.shutil, "copyfile", copy_then_change)
    (path,) = [p for p in release_export(release=release, fmt="csv", out_dir=tmp_path) if p.name == "items.csv"]
    assert release_verify(release=release, folder=tmp_path, fmt="csv") == []
    assert b"=1+1" not in path.read_bytes()


def test_a_kept_folder_missing_one_file_is_not_used(verified_sample, tmp_path):
    release = release_freeze(name="partial")
    victim = sorted((_kept(release) / "cliniqlink").iterdir())[0]
    victim.unlink()
    paths = release_export(release=release, fmt="cliniqlink", out_dir=tmp_path)
    assert victim.name in {p.name for p in paths}
    assert release_verify(release=release, folder=tmp_path, fmt="cliniqlink") == []


def test_a_refused_freeze_leaves_no_files_behind(verified_sample):
    root = Path(settings.RELEASE_FILES_DIR)
    release_freeze(name="same")
    before = sorted(root.iterdir())
    with pytest.raises(Conflict):
        release_freeze(name="same")  # identical to the version before: refused after writing its files
    assert sorted(root.iterdir()) == before


def test_a_freeze_removes_what_earlier_freezes_left_behind_and_nothing_else(verified_sample):
    """A freeze killed mid-way, or rolled back after keeping its files, leaves a folder nobody reads; the next freeze
    removes it once it is old enough not to be another freeze still running."""
    import os
    import time

    from annotation.services.release_files import LEFT_OVER_AGE_SECONDS

    root = Path(settings.RELEASE_FILES_DIR)
    kept = release_freeze(name="first")
    long_ago = time.time() - LEFT_OVER_AGE_SECONDS - 60
    killed, rolled_back, running = root / ".freezing-killed", root / "987654", root / ".freezing-running"
    for folder in (killed, rolled_back, running):
        (folder / "csv").mkdir(parents=True)
    for folder in (killed, rolled_back, _kept(kept)):
        os.utime(folder, (long_ago, long_ago))
    release_freeze(name="second")
    assert not killed.exists() and not rolled_back.exists()
    assert running.exists()  # young: perhaps a freeze still writing in another process
    assert release_verify(release=kept, folder=_kept(kept) / "csv", fmt="csv") == []  # its release exists
