"""Uploaded import files: where they are saved for their job, and the limits every upload is read under (web
pages and API of every app share these)."""

from __future__ import annotations

import logging
import re
import shutil
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from portal.importing import ImportProblem, Limits
from portal.models import Job

logger = logging.getLogger(__name__)

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def upload_too_large(name: str, size: int) -> str | None:
    """Why an upload of ``size`` bytes is refused before it is read ("NAME is N bytes; the limit is M"), or None:
    the one size rule of every upload, saved for a job or read on the spot."""
    limit = settings.PORTAL_UPLOAD_MAX_BYTES
    return f"{name} is {size:,} bytes; the limit is {limit:,}" if size > limit else None


def save_uploads(files: Iterable[UploadedFile]) -> tuple[list[Path], dict[str, str]]:
    """Store uploaded files under PORTAL_UPLOADS_DIR/<uuid>/ keeping their names (for error messages and the
    ClinIQLink file-name → type rule). Returns the paths and a path → original-name map. The folder is deleted
    PORTAL_UPLOAD_RETENTION_DAYS after its job ends (:func:`uploads_prune`)."""
    files = list(files)
    if not files:
        raise ImportProblem("(upload)", "no file was uploaded")
    names: dict[str, str] = {}
    for upload in files:
        original, size = upload.name or "upload", upload.size or 0  # Django types both optional; a form's are set
        too_large = upload_too_large("file", size)
        if too_large:
            raise ImportProblem(original, too_large)
        name = _stored_name(original)
        if name in names:
            # Both would be saved as one file: the first one's content lost, and the import then reading the
            # second twice (refused as a duplicate uid, pointing at the wrong cause). Refused before anything is
            # stored; the name also carries the ClinIQLink file-name rule (MC.json holds multiple_choice items).
            raise ImportProblem("(upload)", f"two files named {name}; upload files of the same name one at a time")
        names[name] = original
    folder = Path(settings.PORTAL_UPLOADS_DIR) / uuid.uuid4().hex
    folder.mkdir(parents=True, exist_ok=True)
    paths, displays = [], {}
    for upload, name in zip(files, names, strict=True):
        original = names[name]
        path = folder / name
        with path.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        paths.append(path)
        displays[str(path)] = original
    return paths, displays


def _stored_name(original: str) -> str:
    """The name an upload is saved under: its base name, characters other than letters, digits and ``._-``
    replaced (a browser may send a folder path; nothing may lead out of the upload's folder)."""
    return _SAFE.sub("_", Path(original).name) or "upload"


def upload_limits() -> Limits:
    """The limits an uploaded file is read under (PORTAL_UPLOAD_* settings)."""
    return Limits(
        max_bytes=settings.PORTAL_UPLOAD_MAX_BYTES,
        max_records=settings.PORTAL_UPLOAD_MAX_RECORDS,
        max_depth=settings.PORTAL_UPLOAD_MAX_DEPTH,
        max_text_chars=settings.PORTAL_UPLOAD_MAX_TEXT_CHARS,
    )


@dataclass
class UploadsPruned:
    """What :func:`uploads_prune` deleted: the jobs whose files went, and upload folders no job reads."""

    jobs: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"jobs": self.jobs, "orphans": self.orphans}


def uploads_prune(*, older_than_days: int, now: datetime | None = None) -> UploadsPruned:
    """Delete the uploaded files of jobs that ended more than ``older_than_days`` ago, and upload folders no job
    reads (a synchronous gold import's, an upload refused before its job was created) once that old.

    What was imported is in the database; the raw file is kept for the retention window so that a refused file
    can be inspected and a failed job run again. Each job is taken under its row lock, as :func:`job_retry`
    takes it (:func:`portal.jobs.job_retry`), so a job queued again is never left without its files. Files outside PORTAL_UPLOADS_DIR are never
    touched.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(days=older_than_days)
    report = UploadsPruned()
    pending = Job.objects.filter(uploads_deleted_at__isnull=True).filter(
        Q(params__has_key="paths") | Q(params__has_key="path")
    )
    read_by_jobs: set[Path] = set()
    for job in pending:
        folders = job.upload_folders()
        read_by_jobs.update(folders)
        if not folders or not job.finished or not job.finished_at or job.finished_at >= cutoff:
            continue
        with transaction.atomic():
            locked = Job.objects.select_for_update(skip_locked=True).filter(pk=job.pk).first()
            if locked is None or not locked.finished_at or locked.finished_at >= cutoff or locked.uploads_deleted_at:
                continue  # being run again, or handled by another prune meanwhile
            for folder in folders:
                shutil.rmtree(folder, ignore_errors=True)
            Job.objects.filter(pk=job.pk).update(uploads_deleted_at=now)
            report.jobs.append(str(job.pk))
    root = Path(settings.PORTAL_UPLOADS_DIR)
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        # A folder younger than the window may belong to a job about to be created: only old ones go.
        if folder.is_dir() and folder.resolve() not in read_by_jobs and folder.stat().st_mtime < cutoff.timestamp():
            shutil.rmtree(folder, ignore_errors=True)
            report.orphans.append(folder.name)
    if report.jobs or report.orphans:
        logger.info("uploads pruned: files of %s job(s), %s orphan folder(s)", len(report.jobs), len(report.orphans))
    return report
