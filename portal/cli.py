"""Helpers shared by management commands: a tqdm progress bar wired to :class:`portal.jobs.Progress`, and the
refusal of a missing or bad input file."""

from __future__ import annotations

import contextlib
import sys

from django.core.management.base import CommandError
from tqdm import tqdm

from portal.errors import DomainError
from portal.jobs import Progress


@contextlib.contextmanager
def cli_progress(description: str, *, enabled: bool = True):
    bar = tqdm(total=0, desc=description, unit="item", file=sys.stderr, disable=not enabled, dynamic_ncols=True)
    try:
        yield Progress(bar=bar)
    finally:
        bar.close()


def file_import(path, importer, *, nothing: str):
    """``importer(path)`` for a command: a missing file, or input the service refuses, becomes a CommandError that
    says ``nothing`` was changed (e.g. "nothing was imported") and why."""
    if not path.exists():
        raise CommandError(f"{path}: no such file")
    try:
        return importer(path)
    except DomainError as exc:
        raise CommandError(f"Import refused, {nothing}. {exc}") from exc
