"""The logic of ``manage.py nugget_eval`` (docs/nuggets.md): files in, a JSON-ready report out. No Django.

It joins the pure nugget metric (:mod:`metrics.nuggets`, :mod:`metrics.nugget_io`) and the pure statistics
(:mod:`stats.nuggets`), which may not import each other, so it lives here, one layer up; it imports nothing from
Django and opens no database connection.

Who is human: every labeller in the ``--labels`` files, except those named with ``--judge`` and the matcher
(``matcher``, the labeller name of ``--auto``). Automatic labellers are compared with the humans' consensus.
"""

from __future__ import annotations

from collections.abc import Sequence

from metrics.nuggets import DEFAULT_PARTIAL_THRESHOLD, DEFAULT_SUPPORT_THRESHOLD
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

MATCHER = "matcher"


def nugget_eval_report(
    nuggets_path: str,
    answers_path: str,
    label_paths: Sequence[str] = (),
    *,
    auto: bool = False,
    judges: Sequence[str] = (),
    support_threshold: float = DEFAULT_SUPPORT_THRESHOLD,
    partial_threshold: float = DEFAULT_PARTIAL_THRESHOLD,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    encode=None,
) -> dict:
    """``{"systems": {system: {labeller: {score: value, ..., "n_answers": n}}}, "agreement": {...}, "notes": [...]}``.

    Raises :class:`metrics.nugget_io.NuggetInputError` on bad input. ``encode``: the matcher's encoder (tests pass
    a fake one); default, the packaged model loaded offline.
    """
    raise NotImplementedError


def to_json(report: dict) -> str:
    """The report as one JSON line (NaN never appears: undefined figures are null)."""
    raise NotImplementedError


def format_text(report: dict) -> str:
    """The report as readable tables."""
    raise NotImplementedError
