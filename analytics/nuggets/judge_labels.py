"""External judges' nugget labels brought into a study (a lab's LLM judge run elsewhere; docs/nuggets.md).

JSONL, one label per line: ``{"item_uid", "system", "nugget_id", "label", "judge"}`` (``labeller`` is accepted
for ``judge``), read by the one strict reader :func:`metrics.nugget_io.read_labels_jsonl`. All or nothing: the
first problem refuses the whole file, naming the file, the line (from 1) and the field, and nothing changes.
Importing a judge again replaces that judge's labels in the study.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.db import transaction

from analytics.labellers import JudgeImport, judge_name_problem
from analytics.models import JudgeNuggetLabel
from analytics.nuggets.board import nugget_board_refresh
from analytics.nuggets.selectors import nugget_questions, study_answers
from analytics.selectors import study_physician_pseudonyms
from metrics.nugget_io import NuggetInputError, read_labels_jsonl
from portal.audit import audit_record
from ranking.models import Study

if TYPE_CHECKING:
    from portal.models import User


def judge_labels_import(*, study: Study, source: str | Iterable[bytes], name: str, user: User | None) -> JudgeImport:
    """Store the judge labels of ``source`` (a path or an uploaded file's lines) for ``study``.

    Refused with :class:`metrics.nugget_io.NuggetInputError` (file, line, field): bad JSON or label, a
    duplicate line, an item not among the study's nugget questions, a nugget not in the version the study
    froze, a system that did not answer the item in this study, a judge named ``matcher`` or ``consensus``,
    like a physician's pseudonym, or with characters other than letters, digits, spaces and ``. _ ( ) + -``.
    """
    questions = {q.item.uid: q for q in nugget_questions(study)}
    nuggets = {uid: {n.key: n for n in q.nugget_set.nuggets.all()} for uid, q in questions.items()}
    answers = {(a.question.item.uid, a.system.name): a for a in study_answers(study)}
    pseudonyms = study_physician_pseudonyms(study)
    labels = read_labels_jsonl(source, name=name, with_lines=True)
    if not labels:
        raise NuggetInputError(name, "has no labels")
    rows: list[JudgeNuggetLabel] = []
    for line, label in labels:
        question = questions.get(label.item_uid)
        if question is None:
            raise NuggetInputError(
                name, f"item {label.item_uid!r} is not a nugget question of this study", line=line, field="item_uid"
            )
        nugget = nuggets[label.item_uid].get(label.nugget_id)
        if nugget is None:
            raise NuggetInputError(
                name,
                f"item {label.item_uid!r} has no nugget {label.nugget_id!r} in the version this study uses "
                f"(version {question.nugget_set.version})",
                line=line,
                field="nugget_id",
            )
        answer = answers.get((label.item_uid, label.system))
        if answer is None:
            raise NuggetInputError(
                name, f"system {label.system!r} has no answer to item {label.item_uid!r} in this study",
                line=line, field="system",
            )  # fmt: skip
        _check_judge(label.labeller, name, line, pseudonyms)
        rows.append(
            JudgeNuggetLabel(
                answer=answer,
                nugget=nugget,
                labeller=label.labeller,
                source=JudgeNuggetLabel.Source.IMPORT,
                label=label.label,
            )
        )
    per_judge = dict(sorted(Counter(row.labeller for row in rows).items()))
    with transaction.atomic():
        replaced, _ = JudgeNuggetLabel.objects.filter(
            answer__question__study=study, labeller__in=list(per_judge)
        ).delete()
        JudgeNuggetLabel.objects.bulk_create(rows, batch_size=2000)
        audit_record(
            actor=user,
            obj=study,
            action="nugget_judge_labels_import",
            after={"file": name, "labels": per_judge, "replaced": replaced},
        )
        nugget_board_refresh(study=study, user=user)
    return JudgeImport(file=name, counts=per_judge, replaced=replaced)


def _check_judge(judge: str, name: str, line: int, pseudonyms: set[str]) -> None:
    problem = judge_name_problem(judge, pseudonyms)
    if problem:
        raise NuggetInputError(name, problem, line=line, field="judge")
