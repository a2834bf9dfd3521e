"""Helpers shared by management commands: a tqdm progress bar wired to :class:`portal.jobs.Progress`."""

from __future__ import annotations

import contextlib
import sys

from tqdm import tqdm

from portal.jobs import Progress


@contextlib.contextmanager
def cli_progress(description: str, *, enabled: bool = True):
    bar = tqdm(total=0, desc=description, unit="item", file=sys.stderr, disable=not enabled, dynamic_ncols=True)
    try:
        yield Progress(bar=bar)
    finally:
        bar.close()
