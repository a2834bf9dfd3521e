"""The "next question" queue of a study.

Guarantees (docs/design.md §6): a question goes to at most ``study.overlap`` rankers, never twice to the same ranker,
never to a ranker who has seen the item's answer elsewhere in the portal when the reference is among the answers
(:func:`questions_withheld_q`), and concurrent "next" requests never over-assign. A ranker's claim is a
:class:`RankingTask` with a lease; a question's *active* tasks are the submitted ones plus the leased ones whose lease
has not run out.

Under a designed physician sample (:mod:`analytics.services.physician_sample`) only the drawn questions are handed
out (``StudyQuestion.physician_sampled``, true for every question of a study without a design).

Locking order everywhere: the :class:`StudyQuestion` row, then the task row. Candidate questions are locked with
``SELECT … FOR UPDATE SKIP LOCKED`` so concurrent rankers walk past each other instead of queueing; once a row is
locked its active count is re-read in a fresh statement (READ COMMITTED: a task committed by someone who held the
lock a moment ago is visible to that statement, but not to the one that found the candidate).
"""

from __future__ import annotations

import random
import time
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.selectors.blinding import reference_seen_q
from portal.errors import Conflict, NotAllowed
from portal.models import User
from portal.roles import can_rank
from ranking.models import RankingTask, Study, StudyQuestion
from ranking.shuffle import permutation, seeded_fraction, task_seed

_CANDIDATES = 8  # rows locked per round; small, so concurrent rankers leave each other plenty to take


def _active_q(now: datetime) -> Q:
    return Q(status=RankingTask.Status.SUBMITTED) | Q(status=RankingTask.Status.LEASED, lease_expires_at__gt=now)


def questions_withheld_q(*, study: Study, ranker: User | OuterRef) -> Q:
    """``Q`` over a study's questions: those never handed to ``ranker``, because some page of the portal showed them
    the item's answer (vetting, nuggets, adjudication, an item page: ``annotation.selectors.blinding``), which is the
    reference answer among the study's answers; they would recognise it. Nothing is withheld in a study without the
    reference. ``ranker`` may be an ``OuterRef`` to a person (a query over several people)."""
    if not study.include_reference:
        return Q(pk__in=[])
    return reference_seen_q(ranker, prefix="item__")


WITHHELD = (
    "You have seen the answer to this question elsewhere in the portal (vetting the item, or working on its nuggets), "
    "so you would recognise the reference among the answers: your judgement of it is not stored, and the question "
    "goes to another physician."
)


def question_withheld(*, study: Study, ranker: User, question_id: int) -> bool:
    """Whether the question is withheld from ``ranker`` (:func:`questions_withheld_q`)."""
    withheld = StudyQuestion.objects.filter(pk=question_id).filter(questions_withheld_q(study=study, ranker=ranker))
    return withheld.exists()


def question_active_count(question_id: int, now: datetime, *, exclude_task: RankingTask | None = None) -> int:
    tasks = RankingTask.objects.filter(_active_q(now), question_id=question_id)
    if exclude_task is not None:
        tasks = tasks.exclude(pk=exclude_task.pk)
    return tasks.count()


def task_next(
    *, study: Study, ranker: User, now: datetime | None = None, not_again: RankingTask | None = None
) -> RankingTask | None:
    """The ranker's current task in ``study``, or a newly leased one; None when nothing is left for them.

    Questions the ranker skipped come back once no unskipped one is left, the one skipped longest ago first
    (``not_again``: a task just skipped, which is not handed straight back).
    """
    if not can_rank(ranker):
        raise NotAllowed("Only rankers take ranking tasks.")
    if not study.is_open:
        raise Conflict("This study is closed.", code="study_closed")
    now = now or timezone.now()
    lease = timedelta(seconds=study.lease_seconds)
    with transaction.atomic():
        _withdraw_seen(study=study, ranker=ranker)
        current = _resume(study=study, ranker=ranker, now=now, lease=lease)
        if current is not None:
            return current
        task = _lease_new(study=study, ranker=ranker, now=now, lease=lease)
        if task is not None:
            return task
        return _skipped_again(study=study, ranker=ranker, now=now, lease=lease, not_again=not_again)


def _withdraw_seen(*, study: Study, ranker: User) -> None:
    """The ranker's leased or skipped tasks on questions withheld from them since (they saw the item's answer after
    taking the question) end as released: their slots go to other rankers, and they are not handed back."""
    open_statuses = [RankingTask.Status.LEASED, RankingTask.Status.SKIPPED]
    withheld = StudyQuestion.objects.filter(study=study).filter(questions_withheld_q(study=study, ranker=ranker))
    tasks = RankingTask.objects.filter(study=study, ranker=ranker, status__in=open_statuses, question__in=withheld)
    for task_id, question_id in tasks.values_list("pk", "question_id"):  # read without locks; usually none
        StudyQuestion.objects.select_for_update().get(pk=question_id)  # question, then task: see the module doc
        RankingTask.objects.filter(pk=task_id, status__in=open_statuses).update(status=RankingTask.Status.RELEASED)


def _lease_new(*, study: Study, ranker: User, now: datetime, lease: timedelta) -> RankingTask | None:
    for _ in range(200):  # each round assigns, or finds the candidates full / briefly locked and looks again
        taken_by_me = RankingTask.objects.filter(question=OuterRef("pk"), ranker=ranker)
        active = (
            RankingTask.objects.filter(_active_q(now), question=OuterRef("pk"))
            .order_by()
            .values("question")
            .annotate(n=Count("pk"))
            .values("n")
        )
        open_questions = (
            StudyQuestion.objects.asked()
            .filter(study=study)
            .filter(~Exists(taken_by_me))
            .exclude(questions_withheld_q(study=study, ranker=ranker))
            .alias(active_n=Coalesce(Subquery(active), 0))
            .filter(active_n__lt=study.overlap)
            .order_by("position")
        )
        candidates = list(open_questions.select_for_update(skip_locked=True, of=("self",))[:_CANDIDATES])
        if not candidates:
            if not open_questions.exists():
                return None
            # Every open question is locked by a ranker being served this instant: wait a moment, look again.
            time.sleep(random.uniform(0.002, 0.01))
            continue
        for question in candidates:
            if question_active_count(question.pk, now) >= study.overlap:
                continue
            task = _task_create(study=study, question=question, ranker=ranker, now=now, lease=lease)
            if task is not None:
                return task
    return None


def _skipped_again(
    *, study: Study, ranker: User, now: datetime, lease: timedelta, not_again: RankingTask | None = None
) -> RankingTask | None:
    """Lease again the ranker's oldest skipped task whose question still has a free slot (same shuffle as before)."""
    skipped = RankingTask.objects.filter(study=study, ranker=ranker, status=RankingTask.Status.SKIPPED)
    if not_again is not None:
        skipped = skipped.exclude(pk=not_again.pk)
    for task_id, question_id in skipped.order_by("skipped_at", "leased_at").values_list("pk", "question_id"):
        StudyQuestion.objects.select_for_update().get(pk=question_id)  # question, then task: see the module doc
        task = RankingTask.objects.select_for_update().get(pk=task_id)
        if task.status != RankingTask.Status.SKIPPED:
            continue
        if question_active_count(question_id, now) >= study.overlap:
            continue  # others filled it meanwhile; it stays skipped and is counted as such
        task.status = RankingTask.Status.LEASED
        task.lease_expires_at = now + lease
        task.save(update_fields=["status", "lease_expires_at"])
        return task
    return None


def _resume(*, study: Study, ranker: User, now: datetime, lease: timedelta) -> RankingTask | None:
    """Give back the ranker's open task (renewing its lease) unless it ran out and the slot was taken meanwhile."""
    mine = (
        RankingTask.objects.filter(study=study, ranker=ranker, status=RankingTask.Status.LEASED)
        .order_by("leased_at")
        .first()
    )
    if mine is None:
        return None
    StudyQuestion.objects.select_for_update().get(pk=mine.question_id)
    mine = RankingTask.objects.select_for_update().get(pk=mine.pk)
    if mine.status != RankingTask.Status.LEASED:
        return None
    if mine.lease_expires_at > now or question_active_count(mine.question_id, now, exclude_task=mine) < study.overlap:
        mine.lease_expires_at = now + lease
        mine.save(update_fields=["lease_expires_at"])
        return mine
    mine.status = RankingTask.Status.RELEASED
    mine.save(update_fields=["status"])
    return None


def _task_create(
    *, study: Study, question: StudyQuestion, ranker: User, now: datetime, lease: timedelta
) -> RankingTask | None:
    answer_ids = list(question.answers.order_by("id").values_list("id", flat=True))
    seed = task_seed(secret=study.shuffle_secret, ranker_id=ranker.pk, item_id=question.item_id)
    order = [answer_ids[i] for i in permutation(len(answer_ids), seed)]
    ask = study.include_reference and seeded_fraction(seed, "unblinding") < study.unblinding_rate
    try:
        with transaction.atomic():  # savepoint: the same ranker racing in two tabs hits the unique constraint
            return RankingTask.objects.create(
                study=study,
                question=question,
                ranker=ranker,
                seed=seed,
                order=order,
                lease_expires_at=now + lease,
                ask_unblinding=ask,
            )
    except IntegrityError:
        return None


def task_release(*, task: RankingTask, ranker: User, now: datetime | None = None) -> None:
    """The ranker skips a leased question: its slot is free for others meanwhile, and it comes back to this ranker
    after every question they have not skipped (:func:`task_next`)."""
    if task.ranker_id != ranker.pk:
        raise NotAllowed("This is not your task.")
    RankingTask.objects.filter(pk=task.pk, status=RankingTask.Status.LEASED).update(
        status=RankingTask.Status.SKIPPED, skipped_at=now or timezone.now()
    )


def skipped_count(*, study: Study, ranker: User | None = None) -> int:
    """Questions skipped and not yet ranked: the ranker's own, or (no ranker) everyone's in the study."""
    tasks = RankingTask.objects.filter(study=study, status=RankingTask.Status.SKIPPED)
    return (tasks.filter(ranker=ranker) if ranker is not None else tasks).count()
