"""Saving uploaded files for an import job (web page and API share this)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from django.conf import settings

from annotation.importers import ImportProblem

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
