"""A small ranking study made row by row (no queue, no pages) for the judge tests.

Six questions q1..q6, systems SYS-A (short, correct: ranked first), SYS-B (long, ranked second) and SYS-C (ranked
last), plus the reference answer; three physicians rank every question A > B > C, except that physician 2 swaps A
and B on q1 and q2. Physician 0 recognised the reference on q1 (the unblinding check). SYS-C's answers are flagged
as harmful by every physician on q1..q3 (harm asked).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.utils import timezone

from annotation.models import ImportBatch, QAItem
from ranking.models import AnswerJudgement, RankingTask, Study, StudyAnswer, StudyQuestion, System

ITEMS = [f"q{i}" for i in range(1, 7)]
TEXTS = {
    "SYS-A": "Aspirin.",
    "SYS-B": "Aspirin is the usual first choice; it inhibits platelet aggregation and is cheap.",
    "SYS-C": "I am not sure.",
    "reference": "Aspirin, unless contraindicated.",
}


@dataclass
class RankedStudy:
    study: Study
    answers: dict[tuple[str, str], StudyAnswer] = field(default_factory=dict)
    physicians: list = field(default_factory=list)


def ranked_study(make_user, *, name: str = "judged study", questions: int = len(ITEMS)) -> RankedStudy:
    """The study of the module docstring; ``questions`` more than six adds questions ranked A > B > C by all three
    physicians (ten: a study large enough for the report to read its judges, stats.bootstrap.MIN_UNITS_TO_READ)."""
    study = Study.objects.create(name=name, ask_harm=True)
    made = RankedStudy(study=study)
    batch = ImportBatch.objects.create(name=f"batch {name}", fmt="cliniqlink")
    systems = {}
    for system_name in TEXTS:
        systems[system_name], _ = System.objects.get_or_create(
            name=system_name, defaults={"is_reference": system_name == "reference"}
        )
        if system_name != "reference":
            study.systems.add(systems[system_name])
    made.physicians = [make_user("ranker") for _ in range(3)]
    for position, uid in enumerate(_items(questions), start=1):
        item = QAItem.objects.create(
            uid=uid, qa_type="short_answer", question=f"Question {uid}?", answer="Aspirin.", raw={}, batch=batch
        )
        question = StudyQuestion.objects.create(study=study, item=item, position=position)
        for system_name, text in TEXTS.items():
            made.answers[uid, system_name] = StudyAnswer.objects.create(
                question=question, system=systems[system_name], text=text
            )
        for index, physician in enumerate(made.physicians):
            order = ["SYS-A", "reference", "SYS-B", "SYS-C"]
            if index == 2 and uid in ("q1", "q2"):
                order = ["SYS-B", "reference", "SYS-A", "SYS-C"]
            task = RankingTask.objects.create(
                study=study,
                question=question,
                ranker=physician,
                seed="0" * 64,
                order=[made.answers[uid, s].pk for s in order],
                status=RankingTask.Status.SUBMITTED,
                lease_expires_at=timezone.now() + timedelta(minutes=30),
                submitted_at=timezone.now(),
                ask_unblinding=index == 0 and uid == "q1",
                unblinding_correct=True if index == 0 and uid == "q1" else None,
            )
            for rank, system_name in enumerate(order, start=1):
                AnswerJudgement.objects.create(
                    task=task,
                    answer=made.answers[uid, system_name],
                    slot="ABCD"[rank - 1],
                    position=rank,
                    rank=rank,
                    tag="good" if rank < 4 else "bad",
                    harm=system_name == "SYS-C" and uid in ("q1", "q2", "q3"),
                )
    return made


def score_lines(judge: str, scores: dict[str, float], *, questions: int = len(ITEMS)) -> list[dict]:
    """One line per question and model system: ``scores`` gives each system's score on every question."""
    return [
        {"item_uid": uid, "system": system, "score": score, "judge": judge}
        for uid in _items(questions)
        for system, score in scores.items()
    ]


def _items(questions: int) -> list[str]:
    return [f"q{i}" for i in range(1, questions + 1)]
