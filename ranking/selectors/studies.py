"""Read-side queries of the ranking app.

:func:`task_blinded` is the only way a ranker's page or API response gets at a question and its answers: it
returns plain data with slot letters and texts, nothing that names a system or the reference, and the question
without its gold answer.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, F, Func, IntegerField, Max, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Nugget
from annotation.qa_types import QA_TYPE_LABELS, QAType
from portal.models import User
from portal.roles import ranker_accounts
from ranking.models import (
    NuggetJudgement,
    RankingTask,
    SentenceFlag,
    Study,
    StudyAnswer,
    StudyQuestion,
    System,
)
from ranking.rules.rankings import HALLUCINATION_KIND_MEANINGS, UNBLINDING_NO_IDEA, identical_groups
from ranking.services.queue import questions_withheld_q, skipped_count
from ranking.services.submissions import TaskNotFound, task_texts
from ranking.shuffle import slot_letter


def study_list() -> QuerySet[Study]:
    """Studies with ``n_questions``: the questions physicians are asked for (a designed sample's drawn ones)."""
    asked = (
        StudyQuestion.objects.asked()
        .filter(study=OuterRef("pk"))
        .order_by()
        .values("study")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Study.objects.annotate(n_questions=Coalesce(Subquery(asked), 0)).order_by("-created_at")


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
    # under a designed sample the study is complete once its drawn questions are: the others are never handed out
    n_questions = study.questions.asked().count()
    tasks = RankingTask.objects.filter(study=study)
    submitted = tasks.filter(status=RankingTask.Status.SUBMITTED)
    per_question = submitted.filter(question__in=study.questions.asked()).values("question_id").annotate(n=Count("pk"))
    complete = sum(1 for row in per_question if row["n"] >= study.overlap)
    asked = submitted.filter(ask_unblinding=True)
    # "I cannot tell" is an answer, not a missing one: counted apart from the guesses (which name a letter).
    guesses = asked.exclude(unblinding_guess__in=["", UNBLINDING_NO_IDEA]).aggregate(
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
        "unblinding_cannot_tell": asked.filter(unblinding_guess=UNBLINDING_NO_IDEA).count(),
        "unblinding_rate": (guesses["correct"] / guesses["n"]) if guesses["n"] else None,
        "unblinding_chance": (1 / n_answers) if n_answers else None,
    }


def study_rankers_withheld(*, study: Study) -> dict:
    """Organizer view, for staffing the study: every person who may rank, with how many of its questions are
    withheld from them (they saw the item's answer elsewhere in the portal: ``ranking.services.queue``'s rule), and
    how many questions fewer than ``study.overlap`` of them may take. Nothing is withheld without the reference."""
    questions = StudyQuestion.objects.asked().filter(study=study)
    question_ids = list(questions.values_list("pk", flat=True))
    takers = dict.fromkeys(question_ids, 0)  # per question: the rankers it is not withheld from
    rows = []
    for person in ranker_accounts().order_by("email"):
        withheld: set[int] = set()
        if study.include_reference:
            withheld = set(
                questions.filter(questions_withheld_q(study=study, ranker=person)).values_list("pk", flat=True)
            )
        for question_id in question_ids:
            takers[question_id] += question_id not in withheld
        rows.append({"person": person, "withheld": len(withheld), "open": len(question_ids) - len(withheld)})
    return {
        "rankers": rows,
        "short_of_rankers": sum(1 for n in takers.values() if n < study.overlap),
        "applies": study.include_reference,
    }


def questions_withheld_count(*, study: Study, ranker) -> int:
    """How many of the study's questions are withheld from ``ranker`` (told on their start and done pages)."""
    asked = StudyQuestion.objects.asked().filter(study=study)
    return asked.filter(questions_withheld_q(study=study, ranker=ranker)).count()


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
    answers = [{"slot": slot, "text": text} for slot, text in texts.items()]
    if study.ask_nuggets:
        # The sentences frozen at study creation: sentence marks refer to their positions.
        sentences = dict(StudyAnswer.objects.filter(pk__in=task.order).values_list("pk", "sentences"))
        for answer, pk in zip(answers, task.order, strict=True):
            answer["sentences"] = list(sentences[pk])
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
            "ask_ranking": study.ask_ranking,
            "ask_nuggets": study.ask_nuggets,
            "ask_spans": study.ask_spans,
            "spans_by_character": study.spans_by_character,
        },
        "question": _question_blinded(task.question.item, show_passage=study.show_passage),
        "answers": answers,
        # The item's facts (its validated nuggets), not the reference answer; empty outside nugget studies.
        "nuggets": question_nuggets(question=task.question),
        # Identical answers may share a rank even where ties are not allowed; only letters, nothing about authors.
        "identical": identical_groups(texts),
        "hallucination_kinds": [{"kind": k, "meaning": m} for k, m in HALLUCINATION_KIND_MEANINGS.items()],
        "ask_unblinding": task.ask_unblinding,
    }


def ranker_progress(*, study: Study, ranker) -> dict:
    done = RankingTask.objects.filter(study=study, ranker=ranker, status=RankingTask.Status.SUBMITTED).count()
    return {
        "done": done,
        "questions": StudyQuestion.objects.asked().filter(study=study).count(),
        "skipped": skipped_count(study=study, ranker=ranker),
    }


# --- nugget assessment ---------------------------------------------------------------------------------------------


def question_nuggets(*, question: StudyQuestion) -> list[dict]:
    """The nuggets a ranker checks each answer against: the item's validated version frozen with the study, in its
    order, as ``{id, position, text, importance}`` (``id`` is the nugget's key, as in nugget files). Empty outside
    nugget studies."""
    if question.nugget_set_id is None:
        return []
    return [
        {"id": n.key, "position": n.position, "text": n.text, "importance": n.importance}
        for n in Nugget.objects.filter(nugget_set_id=question.nugget_set_id).order_by("position")
    ]


def _labellers(ranker_ids, *, identities: bool) -> dict[int, str]:
    people = User.objects.in_bulk(set(ranker_ids))
    return {pk: (person.email if identities else person.pseudonym) for pk, person in people.items()}


#: Labels fetched from PostgreSQL at a time while the rows are read one by one.
LABEL_FETCH = 5000


def study_nugget_labels(study: Study, *, identities: bool = False) -> Iterator[dict]:
    """Every nugget label of the study's submitted tasks, one row per (ranker, answer, nugget), read from PostgreSQL
    a few thousand at a time as they are consumed (an export of a large study's million labels streams them).

    Rows: ``item_uid``, ``system`` (name), ``is_reference``, ``nugget_id`` (the nugget's key), ``importance``,
    ``nugget_text``, ``label`` (support / partial / not_support), ``labeller`` (the ranker's pseudonym, as in the
    exports; the e-mail address with ``identities``), ``slot`` (the letter the ranker saw) and ``submitted_at``.
    For organizers and reports only: rows name systems.
    """
    submitted = RankingTask.objects.filter(study=study, status=RankingTask.Status.SUBMITTED)
    # each task's answer order once, not once per label (a large nugget study has a million labels)
    orders = dict(submitted.values_list("pk", "order"))
    labellers = _labellers(submitted.values_list("ranker_id", flat=True).distinct(), identities=identities)
    rows = (
        NuggetJudgement.objects.filter(task__study=study, task__status=RankingTask.Status.SUBMITTED)
        .order_by(
            "answer__question__position", "task__submitted_at", "task_id", "answer__system__name", "nugget__position"
        )
        .values(
            "task__ranker_id",
            "task_id",
            "task__submitted_at",
            "answer_id",
            "answer__question__item__uid",
            "answer__system__name",
            "answer__system__is_reference",
            "nugget__key",
            "nugget__importance",
            "nugget__text",
            "label",
        )
    )
    for r in rows.iterator(chunk_size=LABEL_FETCH):
        yield {
            "item_uid": r["answer__question__item__uid"],
            "system": r["answer__system__name"],
            "is_reference": r["answer__system__is_reference"],
            "nugget_id": r["nugget__key"],
            "importance": r["nugget__importance"],
            "nugget_text": r["nugget__text"],
            "label": r["label"],
            "labeller": labellers[r["task__ranker_id"]],
            "slot": slot_letter(orders[r["task_id"]].index(r["answer_id"])),
            "submitted_at": r["task__submitted_at"],
        }


def study_nugget_judgements(study: Study, *, answer_ids=None, ordered: bool = True) -> list[tuple[str, int, int, str]]:
    """Every nugget label of the study's submitted tasks as ``(labeller pseudonym, answer id, nugget id, label)``,
    in the order of :func:`study_nugget_labels` (question, submission, system, nugget); ``answer_ids``: only the
    labels of these answers; ``ordered=False``: in no order (ordering a large study's million labels through three
    joins costs PostgreSQL more than reading them; a caller that groups them needs none). The lean form
    for the nugget report, which maps the ids to items, systems and keys itself."""
    labels = NuggetJudgement.objects.filter(task__study=study, task__status=RankingTask.Status.SUBMITTED)
    if answer_ids is not None:
        labels = labels.filter(answer_id__in=list(answer_ids))
    if ordered:
        labels = labels.order_by(
            "answer__question__position", "task__submitted_at", "task_id", "answer__system__name", "nugget__position"
        )
    rows = list(labels.values_list("task__ranker_id", "answer_id", "nugget_id", "label"))
    names = _labellers({row[0] for row in rows}, identities=False)
    return [(names[ranker], answer, nugget, label) for ranker, answer, nugget, label in rows]


def study_sentence_marks(study: Study, *, identities: bool = False, question_ids=None) -> list[dict]:
    """One row per (submitted task, answer) of a nugget study: which of the answer's sentences the ranker marked.

    Rows: ``item_uid``, ``system``, ``is_reference``, ``labeller``, ``slot``, ``n_sentences`` (the answer's
    sentences as frozen at study creation), ``marked`` (sorted 0-based indices marked wrong or unsupported),
    ``wrong`` and ``unsupported`` (the same split by kind). Unmarked sentences were read and found fine, so an
    answer's precision is ``1 - len(marked) / n_sentences``. ``question_ids``: only the tasks of these questions.
    """
    if not study.ask_nuggets:
        return []
    submitted = RankingTask.objects.filter(study=study, status=RankingTask.Status.SUBMITTED)
    answer_rows = StudyAnswer.objects.filter(question__study=study)
    flag_rows = SentenceFlag.objects.filter(task__study=study, task__status=RankingTask.Status.SUBMITTED)
    if question_ids is not None:  # one item's page: its own rows, not every answer of a large study
        submitted = submitted.filter(question_id__in=list(question_ids))
        answer_rows = answer_rows.filter(question_id__in=list(question_ids))
        flag_rows = flag_rows.filter(task__in=submitted)
    tasks = list(submitted.order_by("question__position", "submitted_at", "pk").values("pk", "ranker_id", "order"))
    # the number of sentences counted by PostgreSQL: a large study's answers' sentence lists are not sent to be parsed
    counted = answer_rows.annotate(
        n_sentences=Func(F("sentences"), function="jsonb_array_length", output_field=IntegerField())
    )
    answers = {
        a["pk"]: a
        for a in counted.values("pk", "question__item__uid", "system__name", "system__is_reference", "n_sentences")
    }
    flags: dict[tuple, dict[str, list[int]]] = {}
    for task_id, answer_id, index, kind in flag_rows.values_list("task_id", "answer_id", "index", "kind"):
        flags.setdefault((task_id, answer_id), {"wrong": [], "unsupported": []})[kind].append(index)
    labellers = _labellers((t["ranker_id"] for t in tasks), identities=identities)
    rows = []
    for task in tasks:
        for position, answer_id in enumerate(task["order"]):
            answer = answers[answer_id]
            kinds = flags.get((task["pk"], answer_id), {"wrong": [], "unsupported": []})
            rows.append(
                {
                    "item_uid": answer["question__item__uid"],
                    "system": answer["system__name"],
                    "is_reference": answer["system__is_reference"],
                    "labeller": labellers[task["ranker_id"]],
                    "slot": slot_letter(position),
                    "n_sentences": answer["n_sentences"],
                    "marked": sorted(kinds["wrong"] + kinds["unsupported"]),
                    "wrong": sorted(kinds["wrong"]),
                    "unsupported": sorted(kinds["unsupported"]),
                }
            )
    return rows


def study_submissions_stamp(study: Study) -> dict:
    """What every physician judgement of ``study`` depends on, in two numbers: how many tasks are submitted and
    the last submission. A task's rankings, nugget labels, sentence marks and spans are written with its
    submission (``ranking.services.submissions``) and a submitted task is not changed afterwards, so two equal
    stamps mean the same judgements. A stored result computed from them keeps the stamp it was computed from, to
    tell when the physicians have changed something since."""
    tasks = RankingTask.objects.filter(study=study, status=RankingTask.Status.SUBMITTED).aggregate(
        n=Count("pk"), last=Max("submitted_at")
    )
    return {
        "submitted_tasks": tasks["n"],
        "last_submitted": tasks["last"].isoformat() if tasks["last"] else None,
    }
