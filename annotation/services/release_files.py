"""The files of a frozen release, kept as the freeze wrote them.

A freeze has to write every export format to hash it (the manifest is of the real bytes). Those files are kept
under ``settings.RELEASE_FILES_DIR/<release id>/<format>/`` instead of being thrown away, so an export or a
download copies them instead of writing 50,000 records again.

What is kept is never trusted: the copies an export hands out are hashed against the manifest recorded in the
database (a fraction of a second at 50,000 items). A folder that is missing, incomplete or differs in one byte (a
disk restored from another backup, a hand edit, a folder left by a freeze whose transaction rolled back) is ignored
and the export is written afresh from the frozen records, as before. The kept files are therefore a cache: deleting
the folder loses nothing, and backups need not hold it. What freezes leave behind (killed mid-way, or rolled back
after keeping their files) is removed by a later freeze.
"""

from __future__ import annotations

import shutil
import tempfile
import time
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


#: The name a freeze's folder starts with until the release row exists and the folder takes its id.
_WRITING = ".freezing-"

#: Left-overs older than this are removed by the next freeze (:func:`release_files_prune`); anything younger may
#: belong to a freeze still running in another process.
LEFT_OVER_AGE_SECONDS = 3600


def release_files_prune() -> list[Path]:
    """Remove what freezes left behind and nobody will read: the folder of a freeze whose process was killed
    mid-way (SIGKILL, out of memory: its clean-up never ran), and the folder of a release whose row does not exist
    (a freeze rolled back by a caller's transaction after keeping its files). Only folders untouched for
    ``LEFT_OVER_AGE_SECONDS``. Returns the folders removed."""
    root = _root()
    if not root.is_dir():
        return []
    cutoff = time.time() - LEFT_OVER_AGE_SECONDS
    old = [path for path in root.iterdir() if path.is_dir() and path.stat().st_mtime < cutoff]
    release_ids = {int(path.name) for path in old if path.name.isdigit()}
    existing = {str(pk) for pk in Release.objects.filter(pk__in=release_ids).values_list("pk", flat=True)}
    left_over = [
        path for path in old if path.name.startswith(_WRITING) or (path.name.isdigit() and path.name not in existing)
    ]
    for path in left_over:
        shutil.rmtree(path, ignore_errors=True)
    return left_over


@contextmanager
def freeze_files() -> Iterator[FreezeFiles]:
    """A fresh folder for one freeze. If the freeze fails, whatever it wrote is removed (and what earlier freezes
    left behind, :func:`release_files_prune`)."""
    root = _root()
    root.mkdir(parents=True, exist_ok=True)
    release_files_prune()
    files = FreezeFiles(Path(tempfile.mkdtemp(prefix=_WRITING, dir=root)))
    try:
        yield files
    except BaseException:
        shutil.rmtree(files.folder, ignore_errors=True)
        raise


def kept_files_copy(release: Release, fmt: str, out_dir: Path, names: list[str]) -> list[Path] | None:
    """Copy the kept files ``names`` of ``fmt`` into ``out_dir`` and return them when every copy matches the
    manifest byte for byte; None when one does not, or is missing (the caller writes the export afresh).

    The copies are hashed, not the kept files before copying: what is checked is exactly what is handed out, even
    if a kept file changes while it is being read."""
    folder = _root() / str(release.pk) / fmt
    recorded = release.manifests.get(fmt) or {}
    if not names or not folder.is_dir() or any(name not in recorded for name in names):
        return None
    copies: list[Path] = []
    try:
        for name in names:
            target = out_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            copies.append(Path(shutil.copyfile(folder / name, target)))
        intact = not manifest.verify({name: recorded[name] for name in names}, out_dir)
    except OSError:  # a kept file gone or unreadable
        intact = False
    if not intact:
        for copy in copies:
            copy.unlink(missing_ok=True)
        return None
    return copies
