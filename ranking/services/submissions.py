"""Submitting a ranking: validate, store the judgements, audit. Idempotent by idempotency key."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from annotation.models import Nugget
from portal.audit import audit_record
from portal.errors import Conflict, DomainError, NotAllowed
from portal.models import User
from ranking.models import (
    AnswerJudgement,
    HallucinationSpan,
    NuggetJudgement,
    RankingDraft,
    RankingTask,
    SentenceFlag,
    StudyAnswer,
    StudyQuestion,
)
from ranking.rules.nuggets import Assessment, assessment_check
from ranking.rules.rankings import UNBLINDING_NO_IDEA, FormRules, identical_groups, ranking_check, unblinding_problems
from ranking.rules.spans import MarkedSpan, derived_label, spans_check
from ranking.services.queue import WITHHELD, question_active_count, question_withheld
from ranking.shuffle import slot_letter

MAX_TIME_MS = 24 * 3600 * 1000


class TaskNotFound(DomainError):
    """No such task for this ranker: the same answer whether it does not exist or is someone else's."""

    http_status = 404
    code = "not_found"


class IncompleteRanking(DomainError):
    code = "incomplete_ranking"

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("Not saved yet: " + "; ".join(problems) + ".")


def task_slots(task: RankingTask) -> list[str]:
    return [slot_letter(i) for i in range(len(task.order))]


def task_texts(task: RankingTask) -> dict[str, str]:
    """{slot letter: answer text} in the task's stored order."""
    texts = dict(StudyAnswer.objects.filter(pk__in=task.order).values_list("pk", "text"))
    return {slot: texts[pk] for slot, pk in zip(task_slots(task), task.order, strict=True)}


def task_identical_slots(task: RankingTask) -> list[list[str]]:
    """Groups of slots whose answers are word for word the same (they may tie in any study)."""
    return identical_groups(task_texts(task))


def task_rules(task: RankingTask) -> FormRules:
    study = task.study
    return FormRules(
        identical=tuple(frozenset(group) for group in task_identical_slots(task)),
        tag_scale=tuple(study.tag_scale),
        ties_allowed=study.ties_allowed,
        # In a span study the item-level hallucination label is derived from the spans, never asked apart.
        ask_hallucination=study.ask_hallucination and not study.ask_spans,
        ask_harm=study.ask_harm,
        ask_unblinding=task.ask_unblinding,
    )


def task_submit(
    *,
    task_id: UUID | str,
    ranker: User,
    answers: dict,
    comment: str = "",
    time_spent_ms: int | None = None,
    idempotency_key: str = "",
    unblinding_guess: str = "",
    nugget_labels: dict | None = None,
    sentence_marks: dict | None = None,
    spans: dict | None = None,
    now: datetime | None = None,
) -> RankingTask:
    """Store the ranker's ranking and / or nugget assessment of a leased task (what the study asks).

    ``answers`` maps slot letters to ``{rank, tag, hallucination?, hallucination_kind?, harm?}`` (ignored when the
    study asks no ranking). In a nugget study ``nugget_labels`` maps slot letters to ``{nugget id: label}`` for
    every nugget of the question, and ``sentence_marks`` slot letters to ``{sentence index: "wrong" |
    "unsupported"}`` (:mod:`ranking.rules.nuggets`). In a span study ``spans`` maps every slot letter to its marks
    ``[{start, end, kind, note?}]`` in characters of the answer text (an empty list: read, nothing hallucinated;
    :mod:`ranking.rules.spans`); the answers' item-level hallucination label is derived from them. Incomplete or inconsistent input raises
    :class:`IncompleteRanking` listing every problem and stores nothing. Sending the same idempotency key again
    returns the stored task unchanged; a second, different submission is refused.
    """
    now = now or timezone.now()
    probe = RankingTask.objects.filter(pk=task_id).values("question_id", "ranker_id").first()
    if probe is None or probe["ranker_id"] != ranker.pk:
        raise TaskNotFound("No such task among yours.")  # same answer for absent and someone else's: no probing
    with transaction.atomic():
        StudyQuestion.objects.select_for_update().get(pk=probe["question_id"])  # question, then task: see queue.py
        task = RankingTask.objects.select_for_update().select_related("study").get(pk=task_id)
        if task.status == RankingTask.Status.SUBMITTED:
            if idempotency_key and idempotency_key == task.idempotency_key:
                return task
            raise Conflict("You have already submitted this ranking.", code="already_submitted")
        if task.status == RankingTask.Status.SKIPPED:
            raise Conflict("You skipped this question; it comes back after your other questions.", code="skipped")
        if task.status == RankingTask.Status.RELEASED:
            raise Conflict("This question was handed back; take the next one.", code="released")
        if not task.study.is_open:
            raise Conflict("This study is closed.", code="study_closed")
        if question_withheld(study=task.study, ranker=ranker, question_id=task.question_id):
            raise NotAllowed(WITHHELD, code="reference_seen")  # seen since it was handed out; next withdraws it
        slots = task_slots(task)
        if task.study.ask_ranking:
            parsed, problems = ranking_check(
                slots=slots, answers=answers, rules=task_rules(task), unblinding_guess=unblinding_guess
            )
        else:
            parsed, problems = [], unblinding_problems(slots=slots, asked=task.ask_unblinding, guess=unblinding_guess)
        assessment, nugget_ids, nugget_problems = _assessment_parse(task, slots, nugget_labels, sentence_marks)
        problems += nugget_problems
        marked, span_problems = _spans_parse(task, slots, spans)
        problems += span_problems
        if problems:
            raise IncompleteRanking(problems)
        if (
            task.lease_expires_at <= now
            and question_active_count(task.question_id, now, exclude_task=task) >= task.study.overlap
        ):
            task.status = RankingTask.Status.RELEASED
            task.save(update_fields=["status"])
            raise Conflict("Your time on this question ran out and it went to another ranker.", code="lease_expired")
        slot_answer = dict(zip(slots, task.order, strict=True))
        # In a span study the answer's item-level label is the spans' (ranking.rules.spans.derived_label).
        labels = {slot: derived_label(slot_spans) for slot, slot_spans in marked.items()}
        AnswerJudgement.objects.bulk_create(
            [
                AnswerJudgement(
                    task=task,
                    answer_id=slot_answer[j.slot],
                    slot=j.slot,
                    position=slots.index(j.slot) + 1,
                    rank=j.rank,
                    tag=j.tag,
                    hallucination=labels[j.slot][0] if j.slot in labels else j.hallucination,
                    hallucination_kind=labels[j.slot][1] if j.slot in labels else j.hallucination_kind,
                    harm=j.harm,
                )
                for j in parsed
            ]
        )
        HallucinationSpan.objects.bulk_create(
            [
                HallucinationSpan(
                    task=task, answer_id=slot_answer[slot], start=s.start, end=s.end, kind=s.kind, note=s.note
                )
                for slot, slot_spans in marked.items()
                for s in slot_spans
            ]
        )
        _assessment_store(task, dict(zip(slots, task.order, strict=True)), assessment, nugget_ids)
        task.status = RankingTask.Status.SUBMITTED
        task.submitted_at = now
        task.comment = (comment or "").strip()[:5000]
        elapsed = int((now - task.leased_at).total_seconds() * 1000)
        task.time_spent_ms = _clamp_ms(time_spent_ms) if time_spent_ms is not None else _clamp_ms(elapsed)
        task.idempotency_key = (idempotency_key or "")[:100]
        if task.ask_unblinding:
            task.unblinding_guess = unblinding_guess
            if unblinding_guess != UNBLINDING_NO_IDEA:
                guessed = StudyAnswer.objects.select_related("system").get(pk=slot_answer[unblinding_guess])
                task.unblinding_correct = guessed.system.is_reference
        task.save(
            update_fields=[
                "status",
                "submitted_at",
                "comment",
                "time_spent_ms",
                "idempotency_key",
                "unblinding_guess",
                "unblinding_correct",
            ]
        )
        RankingDraft.objects.filter(task=task).delete()
        audit_record(
            actor=ranker,
            obj=task,
            action="ranking_submitted",
            after={
                "ranks": {j.slot: j.rank for j in parsed},
                "tags": {j.slot: j.tag for j in parsed},
                **(
                    {"nugget_labels": assessment.labels, "sentence_marks": assessment.marks}
                    if task.study.ask_nuggets
                    else {}
                ),
                **(
                    {"spans": {slot: [s.as_dict() for s in slot_spans] for slot, slot_spans in marked.items()}}
                    if task.study.ask_spans
                    else {}
                ),
            },
        )
    return task


def _assessment_parse(
    task: RankingTask, slots: list[str], labels: object, marks: object
) -> tuple[Assessment, dict[str, int], list[str]]:
    """The checked nugget assessment, the question's {nugget key: Nugget id}, and the problems found."""
    if not task.study.ask_nuggets:
        if _given(labels) or _given(marks):
            return Assessment(), {}, ["this study does not ask for nugget labels or sentence marks"]
        return Assessment(), {}, []
    nuggets = list(
        Nugget.objects.filter(nugget_set_id=task.question.nugget_set_id).order_by("position").values_list("key", "pk")
    )
    sentences = dict(StudyAnswer.objects.filter(pk__in=task.order).values_list("pk", "sentences"))
    n_sentences = {slot: len(sentences[pk]) for slot, pk in zip(slots, task.order, strict=True)}
    assessment, problems = assessment_check(
        slots=slots,
        nugget_keys=[key for key, _ in nuggets],
        n_sentences=n_sentences,
        labels=labels,
        marks=marks,
    )
    return assessment, dict(nuggets), problems


def _spans_parse(task: RankingTask, slots: list[str], spans: object) -> tuple[dict[str, list[MarkedSpan]], list[str]]:
    """The checked, merged spans per slot (empty outside span studies) and the problems found."""
    if not task.study.ask_spans:
        return {}, (["this study does not ask for hallucination spans"] if _given(spans) else [])
    lengths = {slot: len(text) for slot, text in task_texts(task).items()}
    return spans_check(slots=slots, text_lengths=lengths, spans=spans)


def _given(value: object) -> bool:
    """Whether a client sent any nugget label or sentence mark ({"A": {}} is nothing)."""
    if isinstance(value, dict):
        return any(bool(entry) for entry in value.values())
    return bool(value)


def _assessment_store(
    task: RankingTask, slot_answer: dict[str, int], assessment: Assessment, nugget_ids: dict[str, int]
) -> None:
    NuggetJudgement.objects.bulk_create(
        [
            NuggetJudgement(task=task, answer_id=slot_answer[slot], nugget_id=nugget_ids[key], label=label)
            for slot, labels in assessment.labels.items()
            for key, label in labels.items()
        ]
    )
    SentenceFlag.objects.bulk_create(
        [
            SentenceFlag(task=task, answer_id=slot_answer[slot], index=index, kind=kind)
            for slot, marks in assessment.marks.items()
            for index, kind in sorted(marks.items())
        ]
    )


def _clamp_ms(value: Any) -> int:  # what the client sent
    try:
        return max(0, min(int(value), MAX_TIME_MS))
    except (TypeError, ValueError):
        return 0
