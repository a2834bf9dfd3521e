"""External judges' pairwise verdicts brought into a study: which of two answers to a question the judge preferred,
in the order it was shown them, so that the judge card can read its position bias (issue #43).

CSV or JSON Lines with ``item_uid, judge, first, second, verdict``: ``first`` and ``second`` name the systems as the
judge was shown them, ``verdict`` is ``first``, ``second`` or ``tie``; read by
:func:`evaluation.judges.read_verdict_rows`. All or nothing, like the judge scores (:mod:`analytics.judges.scores`):
the first problem refuses the whole file, naming the file, the line (from 1; a CSV's header is line 1) and the field,
and nothing changes. Importing a judge again replaces that judge's verdicts in the study.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import pandas as pd
from django.db import transaction

from analytics.judges.scores import check_judge_and_item, read_upload, study_answers
from analytics.labellers import JudgeImport
from analytics.models import JudgeVerdict
from analytics.selectors import study_physician_pseudonyms
from evaluation.judges import read_verdict_rows
from portal.audit import audit_record
from ranking.models import Study, StudyAnswer
from records.jsonl import InputFileError

if TYPE_CHECKING:
    from portal.models import User


def judge_verdicts_import(*, study: Study, source: str | bytes, name: str, user: User | None) -> JudgeImport:
    """Store the pairwise verdicts of ``source`` (a path, or an uploaded file's bytes) on ``study``'s answers.

    Refused with :class:`records.jsonl.InputFileError` (file, line, field): a missing or empty field, an item that is
    not a question of this study, a system that did not answer it here, the reference answer in a pair, a system
    paired with itself, a second line for the same judge, item and order, a verdict other than first, second or tie,
    and a judge name refused as for scores (:func:`analytics.judges.scores.judge_problem`).
    """
    frame = read_upload(read_verdict_rows, source, name, "verdicts")
    answers = study_answers(study)
    items = {uid for uid, _ in answers}
    pseudonyms = study_physician_pseudonyms(study)
    rows: list[JudgeVerdict] = []
    for line, item, judge, first, second, verdict in zip(
        frame["_line"],
        frame["item_uid"],
        frame["judge"],
        frame["first"],
        frame["second"],
        frame["verdict"],
        strict=True,
    ):
        line = int(line)
        check_judge_and_item(name, line, judge, item, pseudonyms, items)
        first_answer = _answer(answers, item, first, name, line, "first")
        second_answer = _answer(answers, item, second, name, line, "second")
        rows.append(
            JudgeVerdict(
                question=first_answer.question,
                judge=judge,
                first=first_answer,
                second=second_answer,
                verdict=verdict,
                imported_by=user,
            )
        )
    return _store_verdicts(study, name, user, rows)


def _answer(
    answers: dict[tuple[str, str], StudyAnswer], item: str, system: str, name: str, line: int, field: str
) -> StudyAnswer:
    """The study's answer of ``system`` to ``item``; refused (naming ``field``) when there is none, or when it is the
    reference answer (a judge compares systems; the gold answer is not one)."""
    answer = answers.get((item, system))
    if answer is None:
        raise InputFileError(
            name, f"system {system!r} has no answer to item {item!r} in this study", line=line, field=field
        )
    if answer.system.is_reference:
        raise InputFileError(
            name, f"system {system!r} is the reference answer, not a system to compare", line=line, field=field
        )
    return answer


def _store_verdicts(study: Study, name: str, user: User | None, rows: list[JudgeVerdict]) -> JudgeImport:
    """Replace the file's judges' verdicts in ``study`` by ``rows``, audited."""
    per_judge = dict(sorted(Counter(row.judge for row in rows).items()))
    with transaction.atomic():
        replaced, _ = JudgeVerdict.objects.filter(question__study=study, judge__in=list(per_judge)).delete()
        JudgeVerdict.objects.bulk_create(rows, batch_size=2000)
        audit_record(
            actor=user,
            obj=study,
            action="judge_verdicts_import",
            after={"file": name, "verdicts": per_judge, "replaced": replaced},
        )
    return JudgeImport(file=name, counts=per_judge, replaced=replaced, unit="verdicts")


def study_judge_verdicts(study: Study) -> dict[str, pd.DataFrame]:
    """Each imported judge's pairwise verdicts in the study: judge name -> ``item, first, second, verdict`` (system
    names as shown, the verdict as ``first``, ``second`` or ``tie``), sorted by item, first and second."""
    frame = pd.DataFrame(
        list(
            JudgeVerdict.objects.filter(question__study=study).values_list(
                "judge", "question__item__uid", "first__system__name", "second__system__name", "verdict"
            )
        ),
        columns=["judge", "item", "first", "second", "verdict"],
    )
    columns = ["item", "first", "second", "verdict"]
    return {
        str(judge): group[columns].sort_values(columns[:3], kind="stable").reset_index(drop=True)
        for judge, group in frame.groupby("judge", sort=True)
    }
