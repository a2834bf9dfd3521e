"""Submitting rankings: complete and consistent only, idempotent, stored with tags, flags and time."""

from __future__ import annotations

import pytest

from portal.errors import Conflict
from portal.models import AuditEntry
from ranking.models import AnswerJudgement, RankingTask
from ranking.rules.rankings import FormRules, identical_groups, ranking_check
from ranking.services.queue import task_next
from ranking.services.submissions import IncompleteRanking, TaskNotFound, task_slots, task_submit

from .conftest import full_answers

RULES = FormRules(tag_scale=("good", "okay", "bad"))


def _answers(ranks, tags=None):
    tags = tags or {}
    return {slot: {"rank": rank, "tag": tags.get(slot, "good")} for slot, rank in ranks.items()}


@pytest.mark.parametrize(
    ("answers", "rules", "problem"),
    [
        (_answers({"A": 1, "B": 2}), RULES, "no rank for answer C"),
        (
            {"A": {"rank": 1, "tag": "good"}, "B": {"rank": 2, "tag": "good"}, "C": {"rank": 3}},
            RULES,
            "no tag for answer C",
        ),
        (_answers({"A": 1, "B": 1, "C": 2}), RULES, "ties are not allowed in this study: rank 1 given to A and B"),
        (_answers({"A": 1, "B": 2, "C": 4}), RULES, "rank 4 is outside 1–3"),
        (_answers({"A": 1, "B": 2, "C": "x"}), RULES, "is not a whole number"),
        (
            _answers({"A": 1, "B": 2, "C": 3}, {"B": "excellent"}),
            RULES,
            "tag 'excellent' is not one of good, okay, bad",
        ),
        (_answers({"A": 1, "B": 2, "C": 3, "D": 4}), RULES, "unknown answer(s): D"),
        (_answers({"A": 1, "B": 1, "C": 3}), FormRules(("good", "bad"), ties_allowed=True), "without gaps"),
        (
            {**_answers({"A": 1, "B": 2}), "C": {"rank": 3, "tag": "bad", "hallucination": True}},
            FormRules(("good", "bad"), ask_hallucination=True),
            "which kind of hallucination",
        ),
        (
            _answers({"A": 1, "B": 2, "C": 3}),
            FormRules(("good", "bad"), ask_unblinding=True),
            "which answer you think is the reference",
        ),
    ],
)
def test_incomplete_or_inconsistent_rankings_are_refused(answers, rules, problem):
    _, problems = ranking_check(slots=["A", "B", "C"], answers=answers, rules=rules)
    assert any(problem in p for p in problems), problems


def test_valid_rankings_pass():
    assert ranking_check(slots=["A", "B", "C"], answers=_answers({"A": 2, "B": 1, "C": 3}), rules=RULES)[1] == []
    ties = FormRules(("good", "bad"), ties_allowed=True)
    assert ranking_check(slots=["A", "B", "C"], answers=_answers({"A": 1, "B": 1, "C": 2}), rules=ties)[1] == []


def test_identical_groups_compare_after_trimming_and_collapsing_whitespace():
    texts = {
        "A": "Benign  prostatic\nhyperplasia. ",
        "B": "Prostate cancer.",
        "C": " Benign prostatic hyperplasia.",
        "D": "b",
    }
    assert identical_groups(texts) == [["A", "C"]]
    assert identical_groups({"A": "x", "B": "X"}) == []  # case matters: word for word


IDENTICAL_AC = FormRules(("good", "bad"), identical=(frozenset("AC"),))


def test_identical_answers_may_tie_without_ties_allowed_and_only_they_may():
    slots = ["A", "B", "C"]
    ok = ranking_check(slots=slots, answers=_answers({"A": 1, "C": 1, "B": 2}), rules=IDENTICAL_AC)[1]
    assert ok == []
    _, problems = ranking_check(slots=slots, answers=_answers({"A": 1, "B": 1, "C": 2}), rules=IDENTICAL_AC)
    assert problems == ["ties are not allowed in this study: rank 1 given to A and B"]
    _, problems = ranking_check(slots=slots, answers=_answers({"A": 1, "B": 1, "C": 1}), rules=IDENTICAL_AC)
    assert problems == ["ties are not allowed in this study: rank 1 given to A and B and C"]
    _, problems = ranking_check(slots=slots, answers=_answers({"A": 1, "C": 1, "B": 3}), rules=IDENTICAL_AC)
    assert any("without gaps" in p for p in problems), problems
    # not tying identical answers is fine too
    assert ranking_check(slots=slots, answers=_answers({"A": 1, "B": 2, "C": 3}), rules=IDENTICAL_AC)[1] == []


@pytest.mark.django_db
def test_submit_accepts_a_tie_between_word_for_word_identical_answers(make_study, make_user):
    from ranking.models import StudyAnswer

    study = make_study(sample_size=1)
    ranker = make_user("ranker")
    task = task_next(study=study, ranker=ranker)
    a, b, c = task.order
    StudyAnswer.objects.filter(pk=b).update(text=" Same\ttext.  ")
    StudyAnswer.objects.filter(pk=c).update(text="Same text.")
    with pytest.raises(IncompleteRanking, match="ties are not allowed"):
        task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task, ranks={"A": 1, "B": 1, "C": 2}))
    task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task, ranks={"A": 1, "B": 2, "C": 2}))
    assert dict(AnswerJudgement.objects.filter(task=task).values_list("slot", "rank")) == {"A": 1, "B": 2, "C": 2}


@pytest.mark.django_db
def test_submit_stores_every_answer_with_its_system_hidden_behind_the_slot(make_study, make_user):
    study = make_study(sample_size=1, ask_hallucination=True, ask_harm=True)
    ranker = make_user("ranker")
    task = task_next(study=study, ranker=ranker)
    slots = task_slots(task)
    answers = {s: {"rank": i + 1, "tag": "okay"} for i, s in enumerate(slots)}
    answers["A"].update(hallucination=True, hallucination_kind="extrinsic", harm=True)
    task_submit(
        task_id=task.pk, ranker=ranker, answers=answers, comment="  fine ", time_spent_ms=4200, idempotency_key="k1"
    )
    task.refresh_from_db()
    assert task.status == "submitted" and task.comment == "fine" and task.time_spent_ms == 4200
    rows = {j.slot: j for j in AnswerJudgement.objects.filter(task=task)}
    assert len(rows) == len(slots) == 3
    assert rows["A"].hallucination and rows["A"].hallucination_kind == "extrinsic" and rows["A"].harm
    assert rows["B"].hallucination is False and rows["B"].harm is False
    for position, slot in enumerate(slots, start=1):
        assert rows[slot].answer_id == task.order[position - 1] and rows[slot].position == position
    assert AuditEntry.objects.filter(action="ranking_submitted", object_id=str(task.pk)).count() == 1


@pytest.mark.django_db
def test_submit_is_idempotent_by_key_and_refuses_a_second_different_one(make_study, make_user):
    study = make_study(sample_size=1)
    ranker = make_user("ranker")
    task = task_next(study=study, ranker=ranker)
    first = task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task), idempotency_key="same")
    again = task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task, tag="bad"), idempotency_key="same")
    assert again.submitted_at == first.submitted_at
    assert set(AnswerJudgement.objects.values_list("tag", flat=True)) == {"good"}
    with pytest.raises(Conflict, match="already submitted"):
        task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task), idempotency_key="other")


@pytest.mark.django_db
def test_server_refuses_incomplete_and_keeps_the_task_open(make_study, make_user):
    study = make_study(sample_size=1)
    ranker = make_user("ranker")
    task = task_next(study=study, ranker=ranker)
    answers = full_answers(task)
    answers.pop("B")
    with pytest.raises(IncompleteRanking, match="no rank for answer B"):
        task_submit(task_id=task.pk, ranker=ranker, answers=answers)
    assert RankingTask.objects.get(pk=task.pk).status == "leased" and not AnswerJudgement.objects.exists()


@pytest.mark.django_db
def test_someone_elses_task_is_refused(make_study, make_user):
    study = make_study(sample_size=1)
    owner, other = make_user("ranker"), make_user("ranker")
    task = task_next(study=study, ranker=owner)
    with pytest.raises(TaskNotFound):
        task_submit(task_id=task.pk, ranker=other, answers=full_answers(task))


@pytest.mark.django_db
def test_unblinding_guess_is_stored_and_scored(make_study, make_user):
    study = make_study(sample_size=3, unblinding_rate=1.0)
    ranker = make_user("ranker")
    task = task_next(study=study, ranker=ranker)
    assert task.ask_unblinding
    reference_slot = next(
        s
        for s, pk in zip(task_slots(task), task.order, strict=True)
        if task.question.answers.get(pk=pk).system.is_reference
    )
    task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task), unblinding_guess=reference_slot)
    task.refresh_from_db()
    assert task.unblinding_guess == reference_slot and task.unblinding_correct is True
