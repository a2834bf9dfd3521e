"""Kinds of job, each declared once, where its task is defined.

``@job_task(kind=..., label=...)`` makes the function a Celery task and registers it under the kind, with the
title people read and, optionally, the links to what a finished job produced, the sentences that say what it did
and the unit its progress counts. Services start a job by kind
(:func:`portal.jobs.job_start`) and never import a task; recovery, retry and the job pages find the task and
the title here. A stored kind may carry a detail after a colon ("report:<report kind>"): the part before it
names the registered kind. Each app imports its ``tasks`` module in ``AppConfig.ready``, so the registry is
complete in the web process as well as in the worker (where Celery's autodiscovery imports them too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from celery import shared_task
from django.core.exceptions import ImproperlyConfigured

from portal.errors import DomainError

#: (link text, URL) pairs of what a finished job produced, from its result and its parameters.
Links = Callable[[dict, dict], list[tuple[str, str]]]
#: What a finished job did, in sentences people read, from its result and its parameters.
Describe = Callable[[dict, dict], list[str]]
#: A running job's progress in words ("10 of 35 answers scored"), from its stage message, done and total.
ProgressText = Callable[[str, int, int], str]


@dataclass(frozen=True)
class JobKind:
    """A kind of job: the stored ``kind``, its title as people read it, the task that runs it, its links."""

    kind: str
    label: str
    task: Any  # a Celery task (a proxy until the Celery app is finalised)
    task_path: str  # module.function of the task, to tell a second registration of the same task from a clash
    links: Links | None = None
    describe: Describe | None = None
    progress_text: ProgressText | None = None


_KINDS: dict[str, JobKind] = {}


def job_task(
    *,
    kind: str,
    label: str,
    links: Links | None = None,
    describe: Describe | None = None,
    progress_text: ProgressText | None = None,
    **options: Any,
) -> Callable[[Callable[..., Any]], Any]:
    """Make the decorated function the Celery task that runs jobs of ``kind`` (``work(job_id)``) and register it.

    ``label``: the job's title on the job pages; ``links``: what a finished job produced (see :func:`portal.jobs.job_outputs`);
    ``describe``: what a finished job did, in sentences (see :func:`job_summary`); ``progress_text``: a running
    job's progress in words (see :func:`job_progress_text`).
    Tasks acknowledge late (a task whose worker died is redelivered); ``options`` go to Celery's ``shared_task``.
    """
    if not kind or ":" in kind:
        raise ImproperlyConfigured(f"job kind {kind!r}: a non-empty name without ':' (the detail goes after it)")

    def register(function: Callable[..., Any]) -> Any:
        path = f"{function.__module__}.{function.__qualname__}"
        known = _KINDS.get(kind)
        if known is not None and known.task_path != path:
            raise ImproperlyConfigured(f"job kind {kind!r} is run by {known.task_path} and by {path}")
        task = shared_task(**{"acks_late": True, **options})(function)
        _KINDS[kind] = JobKind(
            kind=kind,
            label=label,
            task=task,
            task_path=path,
            links=links,
            describe=describe,
            progress_text=progress_text,
        )
        return task

    return register


def job_kinds() -> dict[str, str]:
    """Every registered kind with its title, in registration order (the jobs page's filter)."""
    return {kind: entry.label for kind, entry in _KINDS.items()}


def job_kind(kind: str) -> JobKind:
    """The registered kind of a stored kind ("report:agreement" is a "report"); DomainError if there is none."""
    entry = _KINDS.get(kind.partition(":")[0])
    if entry is None:
        raise DomainError(
            f"unknown job kind {kind!r}; known kinds: {', '.join(_KINDS) or 'none'}", code="unknown_job_kind"
        )
    return entry


def job_kind_or_none(kind: str) -> JobKind | None:
    """The registered kind of a stored kind, or None for a kind this version does not have."""
    return _KINDS.get(kind.partition(":")[0])


def job_kind_label(kind: str) -> str:
    """A stored kind as people read it: "report:team_agreement" is "Report (team agreement)"; an unknown kind
    (a job of a kind this version no longer has) is shown as stored."""
    base, _, detail = kind.partition(":")
    entry = _KINDS.get(base)
    label = entry.label if entry is not None else kind
    return f"{label} ({detail.replace('_', ' ')})" if detail and entry is not None else label


def job_summary(kind: str, result: object, params: object) -> list[str]:
    """What a succeeded job did, as its kind describes it; empty for a kind that does not, or for a stored result
    of a shape the description does not read (a job of an older version)."""
    entry = _KINDS.get(kind.partition(":")[0])
    if entry is None or entry.describe is None or not isinstance(result, dict):
        return []
    try:
        return entry.describe(result, params if isinstance(params, dict) else {})
    except (KeyError, TypeError, ValueError, AttributeError):
        return []


def job_progress_text(kind: str, message: str, done: int, total: int) -> str:
    """A running job's progress in words: its kind's wording ("10 of 35 answers scored"), else "10 of 35 steps"."""
    entry = _KINDS.get(kind.partition(":")[0])
    if entry is not None and entry.progress_text is not None:
        try:
            return entry.progress_text(message, done, total)
        except (KeyError, TypeError, ValueError):
            pass
    return f"{done:,} of {total:,} steps"


def job_reading(job: Any) -> dict:
    """What a job's progress box shows, wherever it is shown (the job page, a report page, a board page): the
    result in sentences once it succeeded, the progress in words, and whether the raw stage message adds anything
    (a kind that words its progress says the stage there)."""
    entry = _KINDS.get(job.kind.partition(":")[0])
    return {
        "summary": job_summary(job.kind, job.result, job.params) if job.status == "succeeded" else [],
        "progress_text": job_progress_text(job.kind, job.message, job.progress_done, job.progress_total),
        "show_message": not (entry is not None and entry.progress_text is not None),
    }


def count_phrase(n: int, one: str, many: str) -> str:
    """``n`` with its noun: "1 item", "35 items", "1,200 items"."""
    return f"{n:,} {one if n == 1 else many}"


def words_list(words: list[str]) -> str:
    """Words joined as people write a list: "B", "B and C", "B, C and D"."""
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"
