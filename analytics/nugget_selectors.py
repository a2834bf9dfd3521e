"""A nugget study's labels as the plain tables :mod:`analytics.nugget_eval` and :mod:`stats.nuggets` take.

Labellers: each physician under their pseudonym (never their name), ``matcher`` (the portal's embedding matcher)
and each imported judge under the name its file gave. Nuggets are those of the version each question froze when
the study was created (``StudyQuestion.nugget_set``), named by their key ("n1") as in the files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from analytics.models import JudgeNuggetLabel
from analytics.nugget_eval import MATCHER, Marks, label_frame
from annotation.models import Nugget as NuggetRow
from metrics.nugget_io import Label
from metrics.nuggets import Nugget
from portal.models import User
from ranking.models import RankingTask, Study, StudyAnswer, StudyQuestion
from ranking.selectors import study_nugget_labels, study_sentence_marks


@dataclass
class StudyNuggets:
    """What a study's nugget questions hold: nuggets per item, answers, every labeller's labels."""

    nuggets: dict[str, list[Nugget]] = field(default_factory=dict)
    #: item uid → nugget key → the stored nugget (labels are stored against its row)
    nugget_rows: dict[str, dict[str, NuggetRow]] = field(default_factory=dict)
    answers: list[StudyAnswer] = field(default_factory=list)
    frame: pd.DataFrame = field(default_factory=lambda: label_frame([]))
    marks: Marks = field(default_factory=dict)
    humans: list[str] = field(default_factory=list)
    judges: list[str] = field(default_factory=list)
    #: (item uid, system, labeller, nugget key) → (evidence sentence, cosine or None) where a labeller gave one
    evidence: dict[tuple[str, str, str, str], tuple[str, float | None]] = field(default_factory=dict)
    reference_systems: set[str] = field(default_factory=set)

    @property
    def automatic(self) -> list[str]:
        present = set(self.frame["labeller"]) if not self.frame.empty else set()
        return sorted(({MATCHER} & present) | set(self.judges))


def nugget_questions(study: Study):
    """The study's questions that carry a frozen nugget version, with item and nuggets loaded."""
    return (
        StudyQuestion.objects.filter(study=study, nugget_set__isnull=False)
        .select_related("item", "nugget_set")
        .prefetch_related("nugget_set__nuggets")
        .order_by("position")
    )


def study_answers(study: Study, *, question_ids=None):
    """The answers of the study's nugget questions, with their system and item."""
    answers = StudyAnswer.objects.filter(question__study=study, question__nugget_set__isnull=False)
    if question_ids is not None:
        answers = answers.filter(question_id__in=question_ids)
    return answers.select_related("system", "question__item").order_by("question__position", "system__name")


def study_nuggets(study: Study) -> StudyNuggets:
    """Every label of the study's nugget questions, by every labeller, with the physicians' sentence marks."""
    data = StudyNuggets()
    for question in nugget_questions(study):
        rows = list(question.nugget_set.nuggets.all())
        data.nuggets[question.item.uid] = [Nugget(n.key, n.text, n.importance) for n in rows]
        data.nugget_rows[question.item.uid] = {n.key: n for n in rows}
    data.answers = list(study_answers(study))
    data.reference_systems = {a.system.name for a in data.answers if a.system.is_reference}
    physician_labels, marks = _physician_labels(study)
    judge_labels: list[Label] = []
    judges: set[str] = set()
    for row in (
        JudgeNuggetLabel.objects.filter(answer__question__study=study)
        .values_list(
            "answer__question__item__uid",
            "answer__system__name",
            "nugget__key",
            "label",
            "labeller",
            "source",
            "evidence",
            "similarity",
        )
        .order_by("answer_id", "nugget__position", "labeller")
    ):
        item_uid, system, key, label, labeller, source, evidence, similarity = row
        judge_labels.append(Label(item_uid, system, key, label, labeller))
        if source == JudgeNuggetLabel.Source.IMPORT:
            judges.add(labeller)
        if evidence:
            data.evidence[item_uid, system, labeller, key] = (evidence, similarity)
    data.frame = label_frame(physician_labels + judge_labels)
    data.marks = marks
    data.humans = sorted({label.labeller for label in physician_labels})
    data.judges = sorted(judges)
    return data


def study_physician_pseudonyms(study: Study) -> set[str]:
    """Pseudonyms of everyone who holds or held a task in the study (a judge may not take one of these names)."""
    ids = RankingTask.objects.filter(study=study).values_list("ranker_id", flat=True).distinct()
    return {user.pseudonym for user in User.objects.filter(pk__in=ids)}


def _physician_labels(study: Study) -> tuple[list[Label], dict[tuple[str, str, str], list[bool]]]:
    """The physicians' nugget labels and sentence marks from their submitted tasks (ranking's selectors).

    Sentences of an answer in a submitted nugget task that the physician did not flag were read and found fine,
    so every such answer gets its full list of marks.
    """
    labels = [
        Label(row["item_uid"], row["system"], row["nugget_id"], row["label"], row["labeller"])
        for row in study_nugget_labels(study)
    ]
    marks: dict[tuple[str, str, str], list[bool]] = {}
    for row in study_sentence_marks(study):
        marked = set(row["marked"])
        marks[row["item_uid"], row["system"], row["labeller"]] = [i in marked for i in range(row["n_sentences"])]
    return labels, marks


def study_nugget_fingerprint(study: Study) -> tuple:
    """Changes whenever a label, a sentence mark, a submission or a ranking of the study changes (a cache key:
    a submitted task's labels and marks are written with it; judges' and the matcher's are replaced in bulk)."""
    from django.db.models import Count, Max

    tasks = RankingTask.objects.filter(study=study, status=RankingTask.Status.SUBMITTED).aggregate(
        n=Count("pk"), last=Max("submitted_at")
    )
    judges = JudgeNuggetLabel.objects.filter(answer__question__study=study).aggregate(n=Count("pk"), last=Max("pk"))
    return (study.pk, study.created_at, study.ask_ranking, tasks["n"], tasks["last"], judges["n"], judges["last"])
