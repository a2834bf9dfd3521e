"""The next-question queue: overlap, never twice to one ranker, leases, and concurrent requests."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from portal.errors import Conflict, NotAllowed
from ranking.models import RankingTask
from ranking.services.queue import skipped_count, task_next, task_release
from ranking.services.submissions import task_submit

from .conftest import full_answers


@pytest.mark.django_db
def test_each_question_goes_to_at_most_overlap_rankers_never_twice(make_study, make_user):
    study = make_study(sample_size=3, overlap=2)
    rankers = [make_user("ranker") for _ in range(4)]
    seen: dict[int, set] = {}
    for ranker in rankers:
        while (task := task_next(study=study, ranker=ranker)) is not None:
            task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task))
            seen.setdefault(task.question_id, set()).add(ranker.pk)
    assert all(len(r) == 2 for r in seen.values()) and len(seen) == 3
    per_ranker = RankingTask.objects.values_list("ranker_id", "question_id")
    assert len(set(per_ranker)) == len(per_ranker)


@pytest.mark.django_db
def test_open_task_is_resumed_not_duplicated(make_study, make_user):
    study = make_study(sample_size=3)
    ranker = make_user("ranker")
    first = task_next(study=study, ranker=ranker)
    assert task_next(study=study, ranker=ranker).pk == first.pk
    assert RankingTask.objects.count() == 1


@pytest.mark.django_db
def test_expired_lease_frees_the_slot_and_the_late_ranker_is_refused(make_study, make_user):
    study = make_study(sample_size=1, overlap=1)
    slow, quick = make_user("ranker"), make_user("ranker")
    task = task_next(study=study, ranker=slow)
    assert task_next(study=study, ranker=quick) is None  # the only slot is leased
    later = timezone.now() + timedelta(seconds=study.lease_seconds + 1)
    taken = task_next(study=study, ranker=quick, now=later)
    assert taken is not None and taken.question_id == task.question_id
    with pytest.raises(Conflict, match="ran out"):
        task_submit(task_id=task.pk, ranker=slow, answers=full_answers(task), now=later)
    assert task_next(study=study, ranker=slow, now=later) is None  # never the same question twice


@pytest.mark.django_db
def test_skipped_questions_come_back_after_the_others_oldest_skip_first(make_study, make_user):
    study = make_study(sample_size=3)
    ranker = make_user("ranker")
    t0 = timezone.now()
    first = task_next(study=study, ranker=ranker, now=t0)
    task_release(task=first, ranker=ranker, now=t0)
    second = task_next(study=study, ranker=ranker, now=t0)
    assert second.question_id != first.question_id  # unskipped questions first
    task_release(task=second, ranker=ranker, now=t0 + timedelta(seconds=5))
    assert skipped_count(study=study, ranker=ranker) == 2
    third = task_next(study=study, ranker=ranker, now=t0)
    assert third.question_id not in (first.question_id, second.question_id)
    task_submit(task_id=third.pk, ranker=ranker, answers=full_answers(third))
    # every unskipped one done: the skipped ones, oldest skip first, same task (same shuffle) as before
    again = task_next(study=study, ranker=ranker)
    assert again.pk == first.pk and again.status == "leased" and again.order == first.order
    assert skipped_count(study=study, ranker=ranker) == 1
    task_submit(task_id=again.pk, ranker=ranker, answers=full_answers(again))
    assert task_next(study=study, ranker=ranker).pk == second.pk
    task_submit(task_id=second.pk, ranker=ranker, answers=full_answers(second))
    assert task_next(study=study, ranker=ranker) is None
    assert skipped_count(study=study, ranker=ranker) == 0


@pytest.mark.django_db
def test_a_question_just_skipped_is_not_handed_straight_back(make_study, make_user):
    study = make_study(sample_size=1)
    ranker = make_user("ranker")
    task = task_next(study=study, ranker=ranker)
    task_release(task=task, ranker=ranker)
    assert task_next(study=study, ranker=ranker, not_again=task) is None  # the done page offers it again
    assert task_next(study=study, ranker=ranker).pk == task.pk


@pytest.mark.django_db
def test_a_skipped_slot_is_free_for_others_and_not_served_back_once_full(make_study, make_user):
    study = make_study(sample_size=1, overlap=1)
    skipper, other = make_user("ranker"), make_user("ranker")
    task = task_next(study=study, ranker=skipper)
    task_release(task=task, ranker=skipper)
    taken = task_next(study=study, ranker=other)
    assert taken is not None and taken.question_id == task.question_id
    assert task_next(study=study, ranker=skipper) is None  # the question is full now
    assert skipped_count(study=study) == 1
    with pytest.raises(Conflict):
        task_submit(task_id=task.pk, ranker=skipper, answers=full_answers(task))


@pytest.mark.django_db
def test_closed_study_and_wrong_role_are_refused(make_study, make_user, organizer):
    study = make_study(sample_size=1)
    with pytest.raises(NotAllowed):
        task_next(study=study, ranker=make_user("reviewer"))
    study.state = "closed"
    study.save()
    with pytest.raises(Conflict, match="closed"):
        task_next(study=study, ranker=make_user("ranker"))


@pytest.mark.django_db(transaction=True)
def test_concurrent_rankers_never_exceed_overlap(make_study, make_user):
    study = make_study(sample_size=6, overlap=3)
    rankers = [make_user("ranker") for _ in range(12)]
    barrier = threading.Barrier(len(rankers))
    errors: list[BaseException] = []

    def work(ranker):
        try:
            barrier.wait()
            for _ in range(10):
                task = task_next(study=study, ranker=ranker)
                if task is None:
                    break
                task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task))
        except BaseException as exc:  # noqa: BLE001 - collected and re-raised in the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(r,)) for r in rankers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    submitted = RankingTask.objects.filter(status="submitted")
    per_question = {}
    for question_id, ranker_id in submitted.values_list("question_id", "ranker_id"):
        per_question.setdefault(question_id, []).append(ranker_id)
    assert len(per_question) == 6
    assert all(len(r) == 3 and len(set(r)) == 3 for r in per_question.values()), per_question
    assert submitted.count() == 18
