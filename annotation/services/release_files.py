"""The files of a frozen release, kept as the freeze wrote them.

A freeze has to write every export format to hash it (the manifest is of the real bytes). Those files are kept
under ``settings.RELEASE_FILES_DIR/<release id>/<format>/`` instead of being thrown away, so an export or a
download copies them instead of writing 50,000 records again.

What is kept is never trusted: before a kept file is handed out, the whole format's folder is hashed against the
manifest recorded in the database (a fraction of a second at 50,000 items). A folder that is missing, incomplete
or differs in one byte (a disk restored from another backup, a hand edit, a folder left by a freeze whose
transaction rolled back) is ignored and the export is written afresh from the frozen records, as before. The kept
files are therefore a cache: deleting the folder loses nothing, and backups need not hold it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from annotation.exporters import manifest
from annotation.models import Release


def _root() -> Path:
    return Path(settings.RELEASE_FILES_DIR)


class FreezeFiles:
    """The folder a freeze writes its formats into; kept under the release's id once the release row exists."""

    def __init__(self, folder: Path):
        self.folder = folder

    def keep(self, release: Release) -> None:
        """Move the written formats to the release's own folder (replacing a stale one of an earlier database)."""
        target = _root() / str(release.pk)
        if target.exists():
            shutil.rmtree(target)
        self.folder.rename(target)
        self.folder = target


@contextmanager
def freeze_files() -> Iterator[FreezeFiles]:
    """A fresh folder for one freeze. If the freeze fails, whatever it wrote is removed."""
    root = _root()
    root.mkdir(parents=True, exist_ok=True)
    files = FreezeFiles(Path(tempfile.mkdtemp(prefix=".freezing-", dir=root)))
    try:
        yield files
    except BaseException:
        shutil.rmtree(files.folder, ignore_errors=True)
        raise


def kept_files_copy(release: Release, fmt: str, out_dir: Path, names: list[str]) -> list[Path] | None:
    """Copy the kept files ``names`` of ``fmt`` into ``out_dir`` when the whole format's folder still matches the
    manifest byte for byte; None when it does not (the caller writes the export afresh)."""
    folder = _root() / str(release.pk) / fmt
    recorded = release.manifests.get(fmt)
    if not recorded or not folder.is_dir() or manifest.verify(recorded, folder):
        return None
    out_dir.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copyfile(folder / name, out_dir / name)) for name in names]
