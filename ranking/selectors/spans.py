"""The physicians' hallucination spans of a study, answer by answer: the one place the exports, the detector
scores, the report's span sections and the per-item view read them from.

Only submitted tasks count. In a submitted task of a span study every answer the ranker was shown counts as read:
an answer without a span was found free of hallucinations. Soft and hard labels follow :mod:`metrics.spans`.
For organizers and reports only: the rows name systems.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from metrics.spans import hard_labels, merge_spans, soft_labels
from portal.models import User
from ranking.models import HallucinationSpan, RankingTask, Study, StudyAnswer
from ranking.rules.spans import MarkedSpan


@dataclass(frozen=True)
class Annotation:
    """One physician's marks on one answer (empty: read, nothing hallucinated). ``label``: the pseudonym, or the
    e-mail address when identities were asked for."""

    ranker_id: int
    label: str
    spans: tuple[MarkedSpan, ...]


@dataclass
class AnswerSpans:
    answer_id: int
    question_id: int
    item_uid: str
    question: str
    qa_type: str
    lang: str
    system: str
    is_reference: bool
    text: str
    annotations: list[Annotation] = field(default_factory=list)

    @property
    def answer_key(self) -> str:
        return answer_key(self.item_uid, self.answer_id)

    @property
    def n_annotators(self) -> int:
        return len(self.annotations)

    # Derived once: scores, exports and pages read both, and the hard labels come from the soft ones. Read only
    # once ``annotations`` is complete (:func:`study_span_labels` fills it before it returns).
    @cached_property
    def soft_labels(self) -> list[dict]:
        return soft_labels([[(s.start, s.end) for s in a.spans] for a in self.annotations], len(self.text))

    @cached_property
    def hard_labels(self) -> list[list[int]]:
        return hard_labels(self.soft_labels)


def answer_key(item_uid: str, answer_id: int) -> str:
    """An answer's stable id in span files: the item and the answer's row (never the system's name)."""
    return f"{item_uid}/{answer_id}"


class AnswerText(NamedTuple):
    answer_id: int
    text: str


def study_span_answer_texts(study: Study) -> dict[str, AnswerText]:
    """Every answer of the study by its id in span files (:func:`answer_key`), with its text: what an import of
    predictions checks its lines against, without reading anyone's marks."""
    rows = StudyAnswer.objects.filter(question__study=study).values_list("pk", "question__item__uid", "text")
    return {answer_key(uid, pk): AnswerText(pk, text) for pk, uid, text in rows}


def answer_lang(benchmark: str) -> str:
    """Mu-SHROOM's language code of an item (the Chinese benchmark's items are ZH, all others EN)."""
    return "ZH" if benchmark == "promptcblue" else "EN"


def study_span_labels(study: Study, *, identities: bool = False, question_id: int | None = None) -> list[AnswerSpans]:
    """Every answer of a span study in queue order (then by system), with each physician's merged spans from the
    submitted tasks that showed it. Answers nobody has read yet come with no annotations. Empty for a study that
    did not ask for spans. ``question_id``: only that question's answers (one page's worth)."""
    if not study.ask_spans:
        return []
    scope = {"question_id": question_id} if question_id is not None else {}
    # plain tuples, not model rows: a large study has tens of thousands of answers
    answers = {
        pk: AnswerSpans(
            answer_id=pk,
            question_id=question_id,
            item_uid=uid,
            question=question,
            qa_type=qa_type,
            lang=answer_lang(benchmark),
            system=system,
            is_reference=is_reference,
            text=text,
        )
        for pk, question_id, uid, question, qa_type, benchmark, system, is_reference, text in StudyAnswer.objects.filter(
            question__study=study, **scope
        )
        .order_by("question__position", "system__name")
        .values_list(
            "pk",
            "question_id",
            "question__item__uid",
            "question__item__question",
            "question__item__qa_type",
            "question__item__benchmark",
            "system__name",
            "system__is_reference",
            "text",
        )
    }
    tasks = list(
        RankingTask.objects.filter(study=study, status=RankingTask.Status.SUBMITTED, **scope)
        .order_by("question__position", "submitted_at", "pk")
        .values_list("pk", "ranker_id", "order")
    )
    marks: dict[tuple, list[tuple[int, int, str, str]]] = defaultdict(list)
    for task_id, answer_id, start, end, kind, note in HallucinationSpan.objects.filter(
        task__study=study, task__status=RankingTask.Status.SUBMITTED, **{f"task__{k}": v for k, v in scope.items()}
    ).values_list("task_id", "answer_id", "start", "end", "kind", "note"):
        marks[task_id, answer_id].append((start, end, kind, note))
    people = User.objects.in_bulk({ranker for _, ranker, _ in tasks})
    for task_id, ranker_id, order in tasks:
        person = people[ranker_id]
        label = person.email if identities else person.pseudonym
        for answer_id in order:
            if answer_id not in answers:
                continue
            spans = sorted(marks.get((task_id, answer_id), []))
            # stored spans never overlap; merging again keeps the labels right for rows written by hand
            by_start = {s: (k, n) for s, _, k, n in reversed(spans)}  # a merged run keeps its first span's kind
            merged = merge_spans((s, e) for s, e, _, _ in spans)
            kept = tuple(MarkedSpan(s, e, *by_start[s]) for s, e in merged)
            answers[answer_id].annotations.append(Annotation(ranker_id, label, kept))
    return list(answers.values())


def study_span_physicians(study: Study) -> list[int]:
    """The ids of the rankers who submitted a task of the study, in order: the pages number them "Physician 1",
    "Physician 2"… by this list, so a physician keeps their number on every page of the study."""
    return sorted(
        set(
            RankingTask.objects.filter(study=study, status=RankingTask.Status.SUBMITTED).values_list(
                "ranker_id", flat=True
            )
        )
    )
