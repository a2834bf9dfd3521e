"""External judges' per-answer scores brought into a study (an LLM judge run elsewhere; README "Judging the judges").

CSV or JSON Lines with ``item_uid, system, score, judge`` (higher score = better answer), read by the one reader of
such files, :func:`evaluation.judges.read_records` (JSON Lines through :mod:`records.jsonl`). All or nothing: the
first problem refuses the whole file, naming the file, the line (from 1; a CSV's header is line 1) and the field,
and nothing changes. Importing a judge again replaces that judge's scores in the study.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pandas as pd
from django.db import transaction

from analytics.labellers import JudgeImport, judge_name_problem
from analytics.models import JudgeScore
from analytics.selectors import SCORE_LABELS, SCORE_METRICS, study_physician_pseudonyms
from evaluation.agreement import StatsInputError
from evaluation.judges import read_judge_rows
from evaluation.nuggets import CONSENSUS, MATCHER
from portal.audit import audit_record
from ranking.models import Study, StudyAnswer
from records.jsonl import InputFileError

if TYPE_CHECKING:
    from portal.models import User

#: Names an imported judge may not take: the portal's own nugget labellers and its metrics, which join the study
#: report's judges under these names (and their labels).
RESERVED_JUDGE_NAMES = frozenset(
    {MATCHER, CONSENSUS, *SCORE_METRICS, *(label.lower() for label in SCORE_LABELS.values())}
)


LABEL_MAX = JudgeScore._meta.get_field("label").max_length


def _read(source: str | bytes, name: str, scale: list[str]) -> pd.DataFrame:
    """The file's rows (``_line`` counted from 1). ``source``: a path, or an upload's bytes (its ``name`` says
    whether it is JSON Lines or CSV)."""
    if isinstance(source, bytes):
        upload = source.split(b"\n") if name.lower().endswith((".jsonl", ".json", ".ndjson")) else io.BytesIO(source)
        source = upload  # type: ignore[assignment]
    try:
        frame = read_judge_rows(source, scale=scale, name=name)
    except StatsInputError as exc:
        raise _as_input_error(str(exc), name) from None
    if frame.empty:
        raise InputFileError(name, "has no scores")
    return frame


_WHERE = re.compile(
    r"(?:line (?P<line>\d+)(?: \(header\))?)?(?:, )?(?:field '(?P<field>[^']+)')?: (?P<detail>.*)", re.S
)


def _as_input_error(message: str, name: str) -> InputFileError:
    """The reader's message ("NAME: line 3, field 'score': …" or "NAME, line 3, …") with its line and field apart."""
    rest = message.removeprefix(name).removeprefix(":").removeprefix(",").strip()
    found = _WHERE.fullmatch(rest)
    if found is None:
        return InputFileError(name, rest)
    line = found["line"]
    return InputFileError(name, found["detail"], line=int(line) if line else None, field=found["field"])


def judge_scores_import(
    *, study: Study, source: str | bytes, name: str, user: User | None, scale: list[str] | None = None
) -> JudgeImport:
    """Store the judge scores of ``source`` (a path, or an uploaded file's bytes) for ``study``'s answers.

    Lines giving a label instead of a score are scored by the label's place on ``scale`` (best first; by default
    the study's tag scale); the label is kept beside the score.

    Refused with :class:`records.jsonl.InputFileError` (file, line, field): a missing or empty field, a score that is
    not a finite number, an item that is not a question of this study, a system that did not answer it here, a
    second line for the same judge and answer, a judge name that is reserved, a physician's pseudonym or has
    characters other than letters, digits, spaces and ``. _ ( ) + -``.
    """
    frame = _read(source, name, scale or list(study.tag_scale))
    answers = {
        (a.question.item.uid, a.system.name): a
        for a in StudyAnswer.objects.filter(question__study=study).select_related("question__item", "system")
    }
    items = {uid for uid, _ in answers}
    pseudonyms = study_physician_pseudonyms(study)
    seen: set[tuple[str, str, str]] = set()
    rows: list[JudgeScore] = []
    for line, item, system, judge, score, label in zip(
        frame["_line"], frame["item_uid"], frame["system"], frame["judge"], frame["score"], frame["label"], strict=True
    ):
        line = int(line)
        problem = judge_name_problem(judge, pseudonyms, RESERVED_JUDGE_NAMES)
        if problem is None and judge.lower() in RESERVED_JUDGE_NAMES:
            problem = f"the judge name {judge!r} is reserved for the portal's own labels or metrics"
        if problem:
            raise InputFileError(name, problem, line=line, field="judge")
        if item not in items:
            raise InputFileError(name, f"item {item!r} is not a question of this study", line=line, field="item_uid")
        answer = answers.get((item, system))
        if answer is None:
            raise InputFileError(
                name, f"system {system!r} has no answer to item {item!r} in this study", line=line, field="system"
            )
        if label is not None and len(label) > LABEL_MAX:
            raise InputFileError(
                name, f"a label of {len(label):,} characters (at most {LABEL_MAX})", line=line, field="label"
            )
        if (judge, item, system) in seen:
            raise InputFileError(
                name,
                f"a second score from judge {judge!r} for system {system!r} on item {item!r}",
                line=line,
                field="judge",
            )
        seen.add((judge, item, system))
        rows.append(JudgeScore(answer=answer, judge=judge, score=float(score), label=label or "", imported_by=user))
    per_judge = dict(sorted(Counter(row.judge for row in rows).items()))
    with transaction.atomic():
        replaced, _ = JudgeScore.objects.filter(answer__question__study=study, judge__in=list(per_judge)).delete()
        JudgeScore.objects.bulk_create(rows, batch_size=2000)
        audit_record(
            actor=user,
            obj=study,
            action="judge_scores_import",
            after={"file": name, "scores": per_judge, "replaced": replaced},
        )
    return JudgeImport(file=name, counts=per_judge, replaced=replaced, unit="scores")


def study_judge_scores(study: Study, *, judges: Iterable[str] | None = None) -> dict[str, pd.DataFrame]:
    """Each imported judge's scores of the study's answers: judge name -> ``item, system, score``."""
    rows = JudgeScore.objects.filter(answer__question__study=study)
    if judges is not None:
        rows = rows.filter(judge__in=list(judges))
    frame = pd.DataFrame(
        list(rows.values_list("judge", "answer__question__item__uid", "answer__system__name", "score")),
        columns=["judge", "item", "system", "score"],
    )
    return {
        str(judge): group[["item", "system", "score"]].reset_index(drop=True)
        for judge, group in frame.groupby("judge", sort=True)
    }
