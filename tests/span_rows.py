"""Span studies for tests: submitted tasks with hallucination spans written straight into the tables (the
marking page and its submission service are tested on their own)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.utils import timezone

from annotation.models import ImportBatch, QAItem
from ranking.models import HallucinationSpan, RankingTask, Study, StudyAnswer, StudyQuestion, System


def span_study(study: Study) -> Study:
    study.ask_spans = True
    study.save(update_fields=["ask_spans"])
    return study


def submitted_task(question: StudyQuestion, ranker, marks: dict | None = None, *, minutes: int = 0) -> RankingTask:
    """A submitted task of ``ranker`` on ``question`` showing all its answers; ``marks``: answer (or its pk) ->
    ``[(start, end, kind), (start, end, kind, note)…]``."""
    answers = list(question.answers.order_by("pk"))
    now = timezone.now() + timedelta(minutes=minutes)
    task = RankingTask.objects.create(
        study=question.study,
        question=question,
        ranker=ranker,
        seed="test",
        order=[a.pk for a in answers],
        status=RankingTask.Status.SUBMITTED,
        lease_expires_at=now,
        submitted_at=now,
    )
    for answer, spans in (marks or {}).items():
        answer_id = getattr(answer, "pk", answer)
        for start, end, kind, *note in spans:
            HallucinationSpan.objects.create(
                task=task, answer_id=answer_id, start=start, end=end, kind=kind, note=note[0] if note else ""
            )
    return task


# --- a small span study made row by row --------------------------------------------------------------------------

#: item -> (qa_type, benchmark, {system: text})
SPAN_TEXTS = {
    "s1": ("short_answer", "cliniqlink", {"SPAN-A": "Aspirin cures cancer.", "SPAN-B": "Take aspirin daily."}),
    "s2": ("generic", "promptcblue", {"SPAN-A": "阿司匹林可以治愈癌症。", "SPAN-B": "每天服用阿司匹林。"}),
    "s3": ("short_answer", "cliniqlink", {"SPAN-A": "Rest is enough.", "SPAN-B": "Ask a doctor."}),
}
#: physician index -> item -> system -> spans. s3 is read by physician 0 only.
SPAN_MARKS = {
    0: {
        "s1": {"SPAN-A": [(8, 20, "extrinsic", "no such evidence")]},
        "s2": {"SPAN-A": [(4, 10, "intrinsic")], "SPAN-B": [(0, 2, "other")]},
        "s3": {"SPAN-A": [(0, 4, "extrinsic")]},
    },
    1: {
        "s1": {"SPAN-A": [(14, 20, "intrinsic")]},
        "s2": {"SPAN-A": [(6, 10, "intrinsic")]},
    },
}


@dataclass
class SpannedStudy:
    study: Study
    answers: dict[tuple[str, str], StudyAnswer] = field(default_factory=dict)
    questions: dict[str, StudyQuestion] = field(default_factory=dict)
    physicians: list = field(default_factory=list)


def spanned_study(make_user, *, name: str = "span study") -> SpannedStudy:
    """Items s1 (English), s2 (Chinese), s3; systems SPAN-A and SPAN-B; two physicians' marks (:data:`SPAN_MARKS`)."""
    study = Study.objects.create(name=name, ask_spans=True, ask_ranking=False)
    made = SpannedStudy(study=study)
    batch = ImportBatch.objects.create(name=f"batch {name}", fmt="cliniqlink")
    systems = {n: System.objects.get_or_create(name=n)[0] for n in ("SPAN-A", "SPAN-B")}
    study.systems.add(*systems.values())
    made.physicians = [make_user("ranker") for _ in range(2)]
    for position, (uid, (qa_type, benchmark, texts)) in enumerate(SPAN_TEXTS.items(), start=1):
        item = QAItem.objects.create(
            uid=uid, qa_type=qa_type, benchmark=benchmark, question=f"Question {uid}?", answer="-", raw={}, batch=batch
        )
        made.questions[uid] = question = StudyQuestion.objects.create(study=study, item=item, position=position)
        for system_name, text in texts.items():
            made.answers[uid, system_name] = StudyAnswer.objects.create(
                question=question, system=systems[system_name], text=text
            )
        for index, physician in enumerate(made.physicians):
            if uid not in SPAN_MARKS[index]:
                continue
            marks = {made.answers[uid, s]: spans for s, spans in SPAN_MARKS[index][uid].items()}
            submitted_task(question, physician, marks, minutes=index)
    return made
