"""A nugget study's labels as the plain tables :mod:`evaluation.nuggets` and :mod:`stats.nuggets` take.

Labellers: each physician under their pseudonym (never their name), ``matcher`` (the portal's embedding matcher)
and each imported judge under the name its file gave. Nuggets are those of the version each question froze when
the study was created (``StudyQuestion.nugget_set``), named by their key ("n1") as in the files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import pandas as pd

from analytics.boards import import_stamps
from analytics.models import JudgeNuggetLabel
from annotation.models import Nugget as NuggetRow
from evaluation.nuggets import LABEL_COLUMNS, MATCHER, Marks, label_frame
from metrics.nuggets import Nugget
from ranking.models import Study, StudyAnswer, StudyQuestion
from ranking.selectors.studies import study_nugget_judgements, study_sentence_marks, study_submissions_stamp


class AnswerRow(NamedTuple):
    """One answer of a nugget question as the nugget report reads it (a large study has 80,000: no model rows)."""

    answer_id: int
    question_id: int
    item_uid: str
    system: str
    is_reference: bool


@dataclass
class StudyNuggets:
    """What a study's nugget questions hold: nuggets per item, answers, every labeller's labels."""

    nuggets: dict[str, list[Nugget]] = field(default_factory=dict)
    answers: list[AnswerRow] = field(default_factory=list)
    frame: pd.DataFrame = field(default_factory=lambda: label_frame([]))
    marks: Marks = field(default_factory=dict)
    humans: list[str] = field(default_factory=list)
    judges: list[str] = field(default_factory=list)
    #: (item uid, system, labeller, nugget key) → (evidence sentence, cosine or None) where a labeller gave one
    evidence: dict[tuple[str, str, str, str], tuple[str, float | None]] = field(default_factory=dict)
    reference_systems: set[str] = field(default_factory=set)

    @property
    def automatic(self) -> list[str]:
        present = set(self.frame["labeller"].unique()) if not self.frame.empty else set()
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


def study_nuggets(study: Study, *, question_ids=None, marks: bool = True, ordered: bool = True) -> StudyNuggets:
    """Every label of the study's nugget questions, by every labeller, with the physicians' sentence marks
    (``marks``; left out, no answer has a precision); ``question_ids``: only those questions' (one item's page);
    ``ordered=False``: the physicians' labels in no order (the agreement's bootstrap numbers its units in the order
    of the labels, so only a caller without it may).

    Read as ids and mapped here: at a large study's size (a million labels) a row per label with its item, system
    and nugget joined in took most of the report's time."""
    data = StudyNuggets()
    questions = StudyQuestion.objects.filter(study=study, nugget_set__isnull=False)
    if question_ids is not None:
        questions = questions.filter(pk__in=list(question_ids))
    sets = dict(questions.order_by("position").values_list("nugget_set_id", "item__uid"))
    keys: dict[int, str] = {}  # nugget id → key
    for pk, set_id, key, text, importance in (
        NuggetRow.objects.filter(nugget_set_id__in=list(sets))
        .order_by("nugget_set_id", "position")
        .values_list("pk", "nugget_set_id", "key", "text", "importance")
    ):
        data.nuggets.setdefault(sets[set_id], []).append(Nugget(key, text, importance))
        keys[pk] = key
    data.nuggets = {uid: data.nuggets.get(uid, []) for uid in sets.values()}  # in the questions' order
    data.answers = [
        AnswerRow(*row)
        for row in StudyAnswer.objects.filter(question__in=questions)
        .order_by("question__position", "system__name")
        .values_list("pk", "question_id", "question__item__uid", "system__name", "system__is_reference")
    ]
    data.reference_systems = {a.system for a in data.answers if a.is_reference}
    place = {a.answer_id: (a.item_uid, a.system) for a in data.answers}
    wanted = None if question_ids is None else list(place)
    # plain tuples in the columns' order (a large study has a million labels: no object per label)
    rows = [
        (*place[answer_id], keys[nugget_id], label, labeller)
        for labeller, answer_id, nugget_id, label in study_nugget_judgements(study, answer_ids=wanted, ordered=ordered)
    ]
    humans = {row[4] for row in rows}
    judges: set[str] = set()
    if wanted is None:
        stored = JudgeNuggetLabel.objects.filter(answer__question__study=study)
    else:  # by the answers' ids: one question's labels without a join over every label of the study
        stored = JudgeNuggetLabel.objects.filter(answer_id__in=wanted)
    for answer_id, nugget_id, label, labeller, source, evidence, similarity in stored.order_by(
        "answer_id", "nugget__position", "labeller"
    ).values_list("answer_id", "nugget_id", "label", "labeller", "source", "evidence", "similarity"):
        item_uid, system = place[answer_id]
        key = keys[nugget_id]
        rows.append((item_uid, system, key, label, labeller))
        if source == JudgeNuggetLabel.Source.IMPORT:
            judges.add(labeller)
        if evidence:
            data.evidence[item_uid, system, labeller, key] = (evidence, similarity)
    data.frame = pd.DataFrame(rows, columns=LABEL_COLUMNS)
    data.marks = _marks(study, question_ids) if marks else {}
    data.humans = sorted(humans)
    data.judges = sorted(judges)
    return data


def _marks(study: Study, question_ids) -> dict[tuple[str, str, str], list[bool]]:
    """The physicians' sentence marks from their submitted tasks (ranking's selectors). Sentences of an answer in
    a submitted nugget task that the physician did not flag were read and found fine, so every such answer gets
    its full list of marks."""
    marks: dict[tuple[str, str, str], list[bool]] = {}
    for row in study_sentence_marks(study, question_ids=question_ids):
        marked = set(row["marked"])
        marks[row["item_uid"], row["system"], row["labeller"]] = [i in marked for i in range(row["n_sentences"])]
    return marks


def study_nugget_inputs(study: Study) -> dict:
    """What the study's nugget figures are computed from: the physicians' judgements (their stamp) and, per
    automatic labeller (the matcher, each judge), how many labels it has and its newest one (a run or an import
    replaces every row, so a new one shows as a new id)."""
    return {
        "labels": study_submissions_stamp(study),
        "labellers": import_stamps(JudgeNuggetLabel.objects.filter(answer__question__study=study), "labeller"),
    }
