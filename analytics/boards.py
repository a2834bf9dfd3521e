"""Figures of a study that a job computes and a page reads (:class:`analytics.models.StoredBoard`).

At a large study's size some figures take far too long to compute for a request (the detector leaderboard of a span
study, the nugget leaderboard and agreement of a nugget study: ``bench/``) and too much memory for a web process. So
a job computes them and stores them with a record of their inputs, and the page shows the stored figures, when they
were computed, what has changed since (in words) and, while one runs, the job computing the next.

One home for that life cycle, whatever the figures: :func:`board_refresh` queues the job (never two at once for a
study), :func:`board_store` is the job's last step, :func:`board_state` is what the page reads. Each kind of board
brings its own inputs, its words for what changed and its JSON form.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from django.db import transaction
from django.db.models import Count, Max, QuerySet
from django.utils import timezone

from analytics.models import StoredBoard
from portal.jobs import job_start
from portal.models import Job

if TYPE_CHECKING:
    from portal.models import User
    from ranking.models import Study

logger = logging.getLogger(__name__)

Board = TypeVar("Board")
Stored = TypeVar("Stored", bound=StoredBoard)


@dataclass
class BoardState(Generic[Board]):
    """What a page shows: the stored board (None before the first is computed), when, what has changed since, the
    inputs as they are now, and the job computing the next board (or the last one, when it failed)."""

    board: Board | None
    computed_at: datetime | None
    inputs: dict = field(default_factory=dict)
    changes: list[str] = field(default_factory=list)
    job: Job | None = None

    @property
    def computing(self) -> bool:
        return self.job is not None and not self.job.finished

    @property
    def failed(self) -> bool:
        return self.job is not None and self.job.status == Job.Status.FAILED


def board_refresh(model: type[Stored], *, study: Study, kind: str, user: User | None = None) -> Stored:
    """Queue the job of ``kind`` that computes ``study``'s board again, unless one is already queued or running
    (the row is locked, so two requests at once queue one job)."""
    with transaction.atomic():
        stored, _ = model.objects.select_for_update().get_or_create(study=study)
        if stored.job is not None and not stored.job.finished:
            return stored
        stored.job = job_start(kind=kind, params={"study_id": study.pk}, user=user)
        stored.save(update_fields=["job"])
    return stored


def board_store(model: type[Stored], *, study: Study, inputs: dict, result: dict) -> Stored:
    """Store a computed board (the job's last step; storing it twice is harmless). ``inputs`` must be read before
    the data the board was computed from: a change made while the job runs then shows as a change since."""
    stored, _ = model.objects.update_or_create(
        study=study, defaults={"inputs": inputs, "result": result, "computed_at": timezone.now()}
    )
    return stored


def stored_board(model: type[StoredBoard], study: Study, load: Callable[[dict], Board]) -> Board | None:
    """The stored board of ``study`` (None before the first is computed), without asking what changed since."""
    stored = model.objects.filter(study=study, computed_at__isnull=False).only("result").first()
    return _loaded(stored, load) if stored else None


def _loaded(stored: StoredBoard, load: Callable[[dict], Board]) -> Board | None:
    """The stored board read back; None when it cannot be (stored by a version of the portal whose board had other
    fields): the page then shows none and the next job computes it afresh, rather than the page failing."""
    try:
        return load(stored.result)
    except (KeyError, TypeError, ValueError, AttributeError):
        logger.warning("a stored %s of study %s cannot be read", type(stored).__name__, stored.study_id)
        return None


def board_state(
    model: type[StoredBoard],
    study: Study,
    *,
    inputs: dict,
    load: Callable[[dict], Board],
    changes: Callable[[dict, dict], list[str]],
) -> BoardState[Board]:
    """The stored board of ``study`` and what has changed since: ``changes(inputs then, inputs now)`` in words."""
    stored = model.objects.filter(study=study).select_related("job").first()
    state: BoardState[Board] = BoardState(board=None, computed_at=None, inputs=inputs)
    if stored is None:
        return state
    state.job = stored.job
    board = _loaded(stored, load) if stored.computed_at is not None else None
    if board is not None:
        state.board = board
        state.computed_at = stored.computed_at
        state.changes = changes(stored.inputs, inputs)
    return state


def submission_changes(then: dict, now: dict) -> list[str]:
    """What the physicians changed between two :func:`ranking.selectors.studies.study_submissions_stamp` s, in words."""
    more = now["submitted_tasks"] - (then.get("submitted_tasks") or 0)
    if more > 0:
        return [f"{more:,} more physician judgement{'s' if more != 1 else ''} submitted"]
    if more < 0:
        return [f"{-more:,} physician judgement{'s' if more != -1 else ''} removed"]
    if now != then:
        return ["physicians' judgements changed"]
    return []


def import_stamps(rows: QuerySet, name: str) -> dict[str, list[int]]:
    """``{name: [rows, newest row id]}`` of imported ``rows`` grouped by the field ``name`` (a detector, a judge):
    what :func:`labeller_changes` compares."""
    grouped = rows.values(name).annotate(n=Count("pk"), last=Max("pk")).order_by(name)
    return {row[name]: [row["n"], row["last"]] for row in grouped}


def labeller_changes(
    then: dict[str, Any],
    now: dict[str, Any],
    *,
    noun: Callable[[str], str],
    verb: Callable[[str], str] = lambda name: "imported",
) -> list[str]:
    """What imports changed between two ``{name: [rows, newest row id]}`` records, in words (``noun(name)``: how
    the page names it, e.g. “detector “A””; ``verb(name)``: what brought its rows, “imported” or “run”); importing
    replaces every row, so a new import shows as a new id."""
    changes = []
    for name, stamp in now.items():
        if name not in then:
            changes.append(f"{noun(name)} {verb(name)}")
        elif list(then[name]) != list(stamp):
            changes.append(f"{noun(name)} {verb(name)} again")
    changes += [f"{noun(name)} removed" for name in then if name not in now]
    return changes
