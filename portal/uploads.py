"""Uploaded import files: where they are saved for their job, and the limits every upload is read under (web
pages and API of every app share these)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from django.conf import settings

from portal.importing import ImportProblem, Limits

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def save_uploads(files) -> tuple[list[Path], dict[str, str]]:
    """Store uploaded files under PORTAL_UPLOADS_DIR/<uuid>/ keeping their names (for error messages and the
    ClinIQLink file-name → type rule). Returns the paths and a path → original-name map. The folder is deleted
    PORTAL_UPLOAD_RETENTION_DAYS after its job ends (``portal.jobs.uploads_prune``)."""
    if not files:
        raise ImportProblem("(upload)", "no file was uploaded")
    folder = Path(settings.PORTAL_UPLOADS_DIR) / uuid.uuid4().hex
    folder.mkdir(parents=True, exist_ok=True)
    paths, displays = [], {}
    for upload in files:
        if upload.size > settings.PORTAL_UPLOAD_MAX_BYTES:
            raise ImportProblem(
                upload.name, f"file is {upload.size:,} bytes; the limit is {settings.PORTAL_UPLOAD_MAX_BYTES:,}"
            )
        name = _SAFE.sub("_", Path(upload.name).name) or "upload"
        path = folder / name
        with path.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        paths.append(path)
        displays[str(path)] = upload.name
    return paths, displays


def upload_limits() -> Limits:
    """The limits an uploaded file is read under (PORTAL_UPLOAD_* settings)."""
    return Limits(
        max_bytes=settings.PORTAL_UPLOAD_MAX_BYTES,
        max_records=settings.PORTAL_UPLOAD_MAX_RECORDS,
        max_depth=settings.PORTAL_UPLOAD_MAX_DEPTH,
        max_text_chars=settings.PORTAL_UPLOAD_MAX_TEXT_CHARS,
    )
