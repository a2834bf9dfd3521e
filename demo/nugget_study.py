"""The demo's nugget study (a step of ``demo.activity``): "Demo nugget study" ranks the two demo systems and the
reference and checks each answer against the item's validated nuggets, and both demo rankers submit assessments
through the ranking services, so the assessment page, the exports and the nugget reports have content.

Labels are drawn from a fixed seed with plausible rates: model A states most vital facts, model B fewer and makes
more of the claims to avoid, the reference states nearly all; the second ranker sometimes judges one step
differently (the agreement figures have something to measure); model B's sentences are often marked wrong. A few
questions are left open so each ranker still has work.
"""

from __future__ import annotations

import random

from django.db import transaction

from annotation.models import Nugget
from portal.errors import DomainError
from ranking.models import RankingTask, Study, StudyAnswer
from ranking.services.queue import task_next
from ranking.services.studies import study_create
from ranking.services.submissions import task_slots, task_submit

NUGGET_STUDY_NAME = "Demo nugget study"
SEED = "demo-nuggets-2025"
QUESTION_TYPES = ["short_answer", "short_inverse", "multi_hop"]
LEFT_OPEN = {"ranker1@demo.portal": 2}  # questions ranker1 leaves open; ranker2 does about half of them
LABEL_ORDER = ("support", "partial", "not_support")
# P(support), P(partial) per kind of answer and importance (the rest: not_support).
RATES = {
    "Demo model A": {"vital": (0.8, 0.15), "okay": (0.6, 0.2), "avoid": (0.05, 0.05)},
    "Demo model B": {"vital": (0.3, 0.25), "okay": (0.25, 0.25), "avoid": (0.35, 0.15)},
    "reference": {"vital": (0.9, 0.1), "okay": (0.75, 0.15), "avoid": (0.0, 0.05)},
}
MARK_RATES = {"Demo model A": 0.05, "Demo model B": 0.35, "reference": 0.0}


def demo_nugget_study(users: dict, systems: list[str]) -> str:
    """Run once: skipped when the study exists (or no item has validated nuggets and outputs of both systems)."""
    if Study.objects.filter(name=NUGGET_STUDY_NAME).exists():
        return ""
    try:
        result = study_create(
            name=NUGGET_STUDY_NAME,
            systems=systems,
            qa_types=QUESTION_TYPES,
            overlap=2,
            seed=2,
            ask_ranking=True,
            ask_nuggets=True,
            guidelines="Check each answer against the facts: 1 supported, 2 partly, 3 not supported; mark wrong "
            "or unsupported sentences with W or U. Then rank the answers from most to least useful.",
            user=users["organizer@demo.portal"],
        )
    except DomainError as refusal:  # a demo database without usable nuggets is reported, not a crash
        return f"No demo nugget study: {refusal}"
    study = result.study
    submitted = _assess(study, users)
    return f"Study “{NUGGET_STUDY_NAME}” created with {result.included} questions; {submitted} assessments submitted."


def _assess(study: Study, users: dict) -> int:
    rng = random.Random(SEED)
    n_questions = study.questions.count()
    plan = {
        "ranker1@demo.portal": max(n_questions - LEFT_OPEN["ranker1@demo.portal"], 1),
        "ranker2@demo.portal": max(n_questions // 2, 1),
    }
    submitted = 0
    with transaction.atomic():
        for email, n_tasks in plan.items():
            ranker = users[email]
            for _ in range(n_tasks):
                task = task_next(study=study, ranker=ranker)
                if task is None:
                    break
                _submit(task, ranker, rng, second=email.startswith("ranker2"))
                submitted += 1
    return submitted


def _submit(task: RankingTask, ranker, rng: random.Random, *, second: bool) -> None:
    answers = StudyAnswer.objects.select_related("system").in_bulk(task.order)
    nuggets = list(Nugget.objects.filter(nugget_set_id=task.question.nugget_set_id).order_by("position"))
    labels: dict[str, dict[str, str]] = {}
    marks: dict[str, dict[str, str]] = {}
    credit: dict[str, float] = {}
    for slot, pk in zip(task_slots(task), task.order, strict=True):
        answer = answers[pk]
        kind = "reference" if answer.system.is_reference else answer.system.name
        rates = RATES.get(kind, RATES["Demo model B"])
        labels[slot] = {}
        for nugget in nuggets:
            support, partial = rates[nugget.importance]
            draw = rng.random()
            label = "support" if draw < support else "partial" if draw < support + partial else "not_support"
            if second and rng.random() < 0.2:  # the second ranker sometimes sees it one step differently
                label = LABEL_ORDER[min(LABEL_ORDER.index(label) + 1, 2)]
            labels[slot][nugget.key] = label
        marks[slot] = {
            str(i): rng.choice(("wrong", "unsupported"))
            for i in range(len(answer.sentences))
            if rng.random() < MARK_RATES.get(kind, 0.2)
        }
        kept = [n for n in nuggets if n.importance != "avoid"]
        credit[slot] = sum({"support": 1, "partial": 0.5}.get(labels[slot][n.key], 0) for n in kept) - len(marks[slot])
    # The ranking follows the facts: most credit first (slot order breaks ties), tagged by where it landed.
    order = sorted(credit, key=lambda slot: (-credit[slot], slot))
    tags = ["good", "okay", "bad"]
    ranking = {slot: {"rank": i + 1, "tag": tags[min(i, 2)]} for i, slot in enumerate(order)}
    task_submit(
        task_id=task.pk,
        ranker=ranker,
        answers=ranking,
        nugget_labels=labels,
        sentence_marks=marks,
        time_spent_ms=rng.randint(90, 300) * 1000,
        idempotency_key=f"demo-nuggets-{task.pk}",
    )
