"""Read-side queries of the ranking app.

:func:`task_blinded` is the only way a ranker's page or API response gets at a question and its answers: it
returns plain data with slot letters and texts, nothing that names a system or the reference, and the question
without its gold answer.
"""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from annotation.qa_types import QA_TYPE_LABELS, QAType
from ranking.models import RankingTask, Study, StudyAnswer, StudyQuestion, System
from ranking.rules import HALLUCINATION_KIND_MEANINGS, identical_groups
from ranking.services.queue import skipped_count
from ranking.services.submissions import TaskNotFound, task_texts


def study_list() -> QuerySet[Study]:
    return Study.objects.annotate(n_questions=Count("questions", distinct=True)).order_by("-created_at")


def system_list() -> QuerySet[System]:
    return System.objects.filter(is_reference=False).annotate(n_outputs=Count("outputs")).order_by("name")


def studies_for_ranker(*, ranker) -> list[dict]:
    """Open studies with this ranker's own progress (never anyone else's)."""
    mine = (
        RankingTask.objects.filter(ranker=ranker)
        .values("study_id")
        .annotate(
            done=Count("pk", filter=Q(status=RankingTask.Status.SUBMITTED)),
            skipped=Count("pk", filter=Q(status=RankingTask.Status.SKIPPED)),
        )
    )
    counts = {row["study_id"]: row for row in mine}
    return [
        {
            "study": study,
            "done": counts.get(study.pk, {}).get("done", 0),
            "skipped": counts.get(study.pk, {}).get("skipped", 0),
            "questions": study.n_questions,
        }
        for study in study_list().filter(state=Study.State.OPEN)
    ]


def study_progress(*, study: Study) -> dict:
    """Organizer view: how far the study is, and the unblinding-check guess rate."""
    now = timezone.now()
    n_questions = study.questions.count()
    tasks = RankingTask.objects.filter(study=study)
    submitted = tasks.filter(status=RankingTask.Status.SUBMITTED)
    per_question = submitted.values("question_id").annotate(n=Count("pk"))
    complete = sum(1 for row in per_question if row["n"] >= study.overlap)
    asked = submitted.filter(ask_unblinding=True)
    guesses = asked.exclude(unblinding_guess__in=["", "?"]).aggregate(
        n=Count("pk"), correct=Count("pk", filter=Q(unblinding_correct=True))
    )
    n_answers = StudyAnswer.objects.filter(question__study=study).count() / max(n_questions, 1)
    return {
        "questions": n_questions,
        "needed": n_questions * study.overlap,
        "submitted": submitted.count(),
        "complete_questions": complete,
        "active_leases": tasks.filter(status=RankingTask.Status.LEASED, lease_expires_at__gt=now).count(),
        "rankers": submitted.values("ranker_id").distinct().count(),
        "skipped": skipped_count(study=study),
        "unblinding_asked": asked.count(),
        "unblinding_guessed": guesses["n"],
        "unblinding_correct": guesses["correct"],
        "unblinding_rate": (guesses["correct"] / guesses["n"]) if guesses["n"] else None,
        "unblinding_chance": (1 / n_answers) if n_answers else None,
    }


def task_for_ranker(*, task_id, ranker) -> RankingTask:
    """The ranker's own task; someone else's (or none) is refused the same way, so ids cannot be probed."""
    task = RankingTask.objects.select_related("study", "question__item").filter(pk=task_id, ranker_id=ranker.pk).first()
    if task is None:
        raise TaskNotFound("No such task among yours.")
    return task


def _question_blinded(item, *, show_passage: bool = False) -> dict:
    """What the ranker may see of the item: the question and what the model was shown — never the gold answer
    (and, when the study shows it, the source passage)."""
    data = {
        "qa_type": item.qa_type,
        "type_label": QA_TYPE_LABELS.get(QAType(item.qa_type), item.qa_type),
        "question": item.question,
        "lang": "zh" if item.benchmark == "promptcblue" else "en",
    }
    if item.qa_type in (QAType.MULTIPLE_CHOICE, QAType.LIST, QAType.GENERIC) and item.options:
        data["options"] = list(item.options)
    if item.qa_type == QAType.SHORT_INVERSE:
        data["false_answer"] = item.false_answer
    if item.qa_type == QAType.MULTI_HOP_INVERSE:
        data["shown_answer"] = item.answer  # the wrong final answer the model was asked to find the fault in
        data["reasoning"] = list(item.reasoning)
    if show_passage:
        data["passage"] = item.passage.text if item.passage_id else ""
        data["passage_missing"] = not item.passage_id
    return data


def task_blinded(*, task: RankingTask) -> dict:
    """A task as the ranker sees it: slot letters and answer texts in the stored order, nothing more."""
    texts = task_texts(task)
    study = task.study
    return {
        "task": str(task.pk),
        "status": task.status,
        "lease_expires_at": task.lease_expires_at,
        "study": {
            "name": study.name,
            "guidelines": study.guidelines,
            "tag_scale": list(study.tag_scale),
            "ties_allowed": study.ties_allowed,
            "ask_hallucination": study.ask_hallucination,
            "ask_harm": study.ask_harm,
            "show_passage": study.show_passage,
        },
        "question": _question_blinded(task.question.item, show_passage=study.show_passage),
        "answers": [{"slot": slot, "text": text} for slot, text in texts.items()],
        # Identical answers may share a rank even where ties are not allowed; only letters, nothing about authors.
        "identical": identical_groups(texts),
        "hallucination_kinds": [{"kind": k, "meaning": m} for k, m in HALLUCINATION_KIND_MEANINGS.items()],
        "ask_unblinding": task.ask_unblinding,
    }


def ranker_progress(*, study: Study, ranker) -> dict:
    done = RankingTask.objects.filter(study=study, ranker=ranker, status=RankingTask.Status.SUBMITTED).count()
    return {
        "done": done,
        "questions": StudyQuestion.objects.filter(study=study).count(),
        "skipped": skipped_count(study=study, ranker=ranker),
    }
