"""A small nugget study made row by row (no queue, no pages): items with validated nuggets, a study asking for
nugget labels, answers split into sentences, and physicians' submitted tasks with labels and sentence flags.

``hand_study`` is the known-answer study of tests/analytics/test_nugget_reports.py: one item, nuggets n1 (vital),
n2 (okay), n3 (avoid), systems SYS-A and SYS-B (and the reference answer when asked), two physicians.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.utils import timezone

from annotation.models import ImportBatch, Nugget, NuggetSet, QAItem
from metrics.nuggets import split_sentences
from ranking.models import (
    NuggetJudgement,
    RankingTask,
    SentenceFlag,
    Study,
    StudyAnswer,
    StudyQuestion,
    System,
)

NUGGETS = [
    ("n1", "Aspirin inhibits platelet aggregation.", "vital"),
    ("n2", "Low-dose aspirin lowers the risk of a second stroke.", "okay"),
    ("n3", "Aspirin is safe for children with a viral fever.", "avoid"),
]
ANSWERS = {
    "SYS-A": "Aspirin inhibits platelet aggregation. It is cheap. Take it with food.",
    "SYS-B": "Aspirin is safe for children with a viral fever. Rest helps.",
}
#: physician → system → nugget → label (see the module docstring of test_nugget_reports for the sums)
PHYSICIAN_LABELS = {
    0: {
        "SYS-A": {"n1": "support", "n2": "partial", "n3": "not_support"},
        "SYS-B": {"n1": "not_support", "n2": "not_support", "n3": "support"},
    },
    1: {
        "SYS-A": {"n1": "support", "n2": "support", "n3": "not_support"},
        "SYS-B": {"n1": "partial", "n2": "not_support", "n3": "support"},
    },
}
#: physician → system → flagged sentence indexes
PHYSICIAN_FLAGS = {0: {"SYS-A": [2]}, 1: {}}


@dataclass
class NuggetStudy:
    study: Study
    questions: list[StudyQuestion] = field(default_factory=list)
    answers: dict[tuple[str, str], StudyAnswer] = field(default_factory=dict)  # (item uid, system) → answer
    physicians: list = field(default_factory=list)


def nugget_item(uid: str, nuggets=NUGGETS, *, batch: ImportBatch | None = None) -> tuple[QAItem, NuggetSet]:
    batch = batch or ImportBatch.objects.create(name=f"batch {uid}", fmt="cliniqlink")
    item = QAItem.objects.create(
        uid=uid, qa_type="short_answer", question=f"Question {uid}?", answer="Reference answer.", raw={}, batch=batch
    )
    nugget_set = NuggetSet.objects.create(item=item, version=1, status="validated", origin="authored")
    for position, (key, text, importance) in enumerate(nuggets, start=1):
        Nugget.objects.create(nugget_set=nugget_set, position=position, key=key, text=text, importance=importance)
    return item, nugget_set


def nugget_study(
    *, items: dict[str, dict[str, str]], name: str = "nugget study", ask_ranking: bool = False
) -> NuggetStudy:
    """A study over ``items`` (uid → system → answer text); every item gets :data:`NUGGETS`."""
    study = Study.objects.create(name=name, ask_nuggets=True, ask_ranking=ask_ranking, include_reference=False)
    made = NuggetStudy(study=study)
    systems = {}
    for position, (uid, by_system) in enumerate(items.items(), start=1):
        item, nugget_set = nugget_item(uid)
        question = StudyQuestion.objects.create(study=study, item=item, position=position, nugget_set=nugget_set)
        made.questions.append(question)
        for system_name, text in by_system.items():
            if system_name not in systems:
                systems[system_name], _ = System.objects.get_or_create(
                    name=system_name, defaults={"is_reference": system_name == "reference"}
                )
                if not systems[system_name].is_reference:
                    study.systems.add(systems[system_name])
            made.answers[uid, system_name] = StudyAnswer.objects.create(
                question=question, system=systems[system_name], text=text, sentences=split_sentences(text)
            )
    return made


def submit_nugget_task(made: NuggetStudy, physician, uid: str, labels: dict, flags: dict | None = None):
    """A submitted task of ``physician`` on item ``uid``: labels = system → nugget key → label; flags = system →
    sentence indexes."""
    question = next(q for q in made.questions if q.item.uid == uid)
    answers = [a for (u, _), a in made.answers.items() if u == uid]
    task = RankingTask.objects.create(
        study=made.study,
        question=question,
        ranker=physician,
        seed="0" * 64,
        order=[a.pk for a in answers],
        status=RankingTask.Status.SUBMITTED,
        lease_expires_at=timezone.now() + timedelta(minutes=30),
        submitted_at=timezone.now(),
    )
    nuggets = {n.key: n for n in question.nugget_set.nuggets.all()}
    for system_name, by_key in labels.items():
        answer = made.answers[uid, system_name]
        for key, label in by_key.items():
            NuggetJudgement.objects.create(task=task, answer=answer, nugget=nuggets[key], label=label)
    for system_name, indexes in (flags or {}).items():
        for index in indexes:
            SentenceFlag.objects.create(task=task, answer=made.answers[uid, system_name], index=index, kind="wrong")
    return task


def hand_study(make_user, *, name: str = "hand study") -> NuggetStudy:
    """The known-answer study: one item "q1", SYS-A and SYS-B, two physicians' labels and flags."""
    made = nugget_study(items={"q1": dict(ANSWERS)}, name=name)
    for n in (0, 1):
        physician = make_user("ranker")
        made.physicians.append(physician)
        submit_nugget_task(made, physician, "q1", PHYSICIAN_LABELS[n], PHYSICIAN_FLAGS[n])
    return made


def rank_answers(made: NuggetStudy, task, ranks: dict[str, int]) -> None:
    """The task's ranking: system → rank (1 = best), tagged "good"."""
    from ranking.models import AnswerJudgement

    uid = task.question.item.uid
    for position, (system_name, rank) in enumerate(ranks.items(), start=1):
        AnswerJudgement.objects.create(
            task=task, answer=made.answers[uid, system_name], slot=chr(64 + position), position=position,
            rank=rank, tag="good",
        )  # fmt: skip
