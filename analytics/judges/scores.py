"""External judges' per-answer scores brought into a study (an LLM judge run elsewhere; README "Judging the judges").

CSV or JSON Lines with ``item_uid, system, score, judge`` (higher score = better answer), and optionally the judge's
``probability`` that the answer is good and its model family (``judge_family``), read by the one reader of such
files, :func:`evaluation.judges.read_judge_rows` (JSON Lines through :mod:`records.jsonl`). A line labelled "cannot
judge" without a score is the judge declining the answer: stored as a :class:`analytics.models.JudgeAbstention`,
never as a score. All or nothing: the first problem refuses the whole file, naming the file, the line (from 1; a
CSV's header is line 1) and the field, and nothing changes. Importing a judge again replaces that judge's scores and
abstentions in the study.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd
from django.db import transaction

from analytics.labellers import JudgeImport, judge_name_problem
from analytics.models import JudgeAbstention, JudgeScore
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


@dataclass(frozen=True)
class JudgeScoresImport(JudgeImport):
    """A scores import: :class:`JudgeImport` counting scores, and beside them each judge's abstentions."""

    abstentions: dict[str, int] = field(default_factory=dict)
    abstentions_replaced: int = 0


def read_upload(reader: Callable[..., pd.DataFrame], source: str | bytes, name: str, unit: str, **options):
    """The rows ``reader`` (of :mod:`evaluation.judges`) reads from ``source``, a path or an upload's bytes (its
    ``name`` says whether it is JSON Lines or CSV), its errors as :class:`InputFileError`; refused when empty."""
    if isinstance(source, bytes):
        upload = source.split(b"\n") if name.lower().endswith((".jsonl", ".json", ".ndjson")) else io.BytesIO(source)
        source = upload  # type: ignore[assignment]
    try:
        frame = reader(source, name=name, **options)
    except StatsInputError as exc:
        raise _as_input_error(str(exc), name) from None
    if frame.empty:
        raise InputFileError(name, f"has no {unit}")
    return frame


def judge_problem(judge: str, pseudonyms: set[str]) -> str | None:
    """Why ``judge`` cannot name an imported judge (None: it can): :func:`judge_name_problem`, and no reserved name
    in any case ("Semantic" would pass for the metric on the study report)."""
    problem = judge_name_problem(judge, pseudonyms, RESERVED_JUDGE_NAMES)
    if problem is None and judge.lower() in RESERVED_JUDGE_NAMES:
        problem = f"the judge name {judge!r} is reserved for the portal's own labels or metrics"
    return problem


_WHERE = re.compile(
    r"(?:line (?P<line>\d+)(?: \(header\))?)?(?:, )?(?:field '(?P<field>[^']+)')?: (?P<detail>.*)", re.S
)


def check_judge_and_item(name: str, line: int, judge: str, item: str, pseudonyms: set[str], items: set[str]) -> None:
    """Refuse a line of a judge's file (scores or verdicts) whose judge name is not allowed or whose item is not a
    question of the study."""
    problem = judge_problem(judge, pseudonyms)
    if problem:
        raise InputFileError(name, problem, line=line, field="judge")
    if item not in items:
        raise InputFileError(name, f"item {item!r} is not a question of this study", line=line, field="item_uid")


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
) -> JudgeScoresImport:
    """Store the judge scores of ``source`` (a path, or an uploaded file's bytes) for ``study``'s answers.

    Lines giving a label instead of a score are scored by the label's place on ``scale`` (best first; by default
    the study's tag scale); the label is kept beside the score. A line may add the judge's ``probability`` (0 to 1)
    and ``judge_family`` (the same on all its lines); a line labelled "cannot judge" without a score stores the
    judge's abstention on that answer instead of a score.

    Refused with :class:`records.jsonl.InputFileError` (file, line, field): a missing or empty field, a score that is
    not a finite number, a probability outside 0 to 1, a "cannot judge" line with a score, judge families differing
    between one judge's lines, an item that is not a question of this study, a system that did not answer it here, a
    second line for the same judge and answer, a judge name that is reserved, a physician's pseudonym or has
    characters other than letters, digits, spaces and ``. _ ( ) + -``.
    """
    frame = read_upload(read_judge_rows, source, name, "scores", scale=scale or list(study.tag_scale))
    answers = study_answers(study)
    items = {uid for uid, _ in answers}
    pseudonyms = study_physician_pseudonyms(study)
    seen: set[tuple[str, str, str]] = set()
    rows: list[JudgeScore] = []
    declined: list[JudgeAbstention] = []
    for line, item, system, judge, score, label, probability, family, abstained in zip(
        frame["_line"],
        frame["item_uid"],
        frame["system"],
        frame["judge"],
        frame["score"],
        frame["label"],
        frame["probability"],
        frame["judge_family"],
        frame["abstained"],
        strict=True,
    ):
        line = int(line)
        check_judge_and_item(name, line, judge, item, pseudonyms, items)
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
        if abstained:
            declined.append(JudgeAbstention(answer=answer, judge=judge, imported_by=user))
            continue
        rows.append(
            JudgeScore(
                answer=answer,
                judge=judge,
                score=float(score),
                label=label or "",
                probability=None if pd.isna(probability) else float(probability),
                judge_family=family or "",
                imported_by=user,
            )
        )
    return _store_scores(study, name, user, rows, declined)


def study_answers(study: Study) -> dict[tuple[str, str], StudyAnswer]:
    """The study's answers by (item uid, system name), the reference's included."""
    return {
        (a.question.item.uid, a.system.name): a
        for a in StudyAnswer.objects.filter(question__study=study).select_related("question__item", "system")
    }


def _store_scores(
    study: Study, name: str, user: User | None, rows: list[JudgeScore], declined: list[JudgeAbstention]
) -> JudgeScoresImport:
    """Replace the file's judges' scores and abstentions in ``study`` by ``rows`` and ``declined``, audited."""
    judges = sorted({row.judge for row in rows} | {row.judge for row in declined})
    per_judge = {judge: 0 for judge in judges} | dict(sorted(Counter(row.judge for row in rows).items()))
    abstentions = dict(sorted(Counter(row.judge for row in declined).items()))
    with transaction.atomic():
        replaced, _ = JudgeScore.objects.filter(answer__question__study=study, judge__in=judges).delete()
        abstentions_replaced, _ = JudgeAbstention.objects.filter(
            answer__question__study=study, judge__in=judges
        ).delete()
        JudgeScore.objects.bulk_create(rows, batch_size=2000)
        JudgeAbstention.objects.bulk_create(declined, batch_size=2000)
        after: dict = {"file": name, "scores": per_judge, "replaced": replaced}
        if abstentions or abstentions_replaced:  # files without abstentions keep the audit entry they always had
            after |= {"abstentions": abstentions, "abstentions_replaced": abstentions_replaced}
        audit_record(actor=user, obj=study, action="judge_scores_import", after=after)
    return JudgeScoresImport(
        file=name,
        counts=per_judge,
        replaced=replaced,
        unit="scores",
        abstentions=abstentions,
        abstentions_replaced=abstentions_replaced,
    )


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


def judge_answer_rows(study: Study) -> pd.DataFrame:
    """Every imported judge's scores and abstentions on ``study``'s answers, one row per judge and answer:
    ``judge, item, system, score`` (NaN when abstained), ``probability`` (NaN when not given), ``abstained`` and
    ``judge_family`` ("" when not given; an abstention takes its judge's family from the judge's scores), sorted by
    judge, item and system."""
    columns = ["judge", "item", "system", "score", "probability", "abstained", "judge_family"]
    answer = ("answer__question__item__uid", "answer__system__name")
    scored = [
        (judge, item, system, score, math.nan if probability is None else probability, False, family)
        for judge, item, system, score, probability, family in JudgeScore.objects.filter(
            answer__question__study=study
        ).values_list("judge", *answer, "score", "probability", "judge_family")
    ]
    families: dict[str, str] = {}
    for judge, *_, family in scored:
        families[judge] = families.get(judge) or family
    declined = [
        (judge, item, system, math.nan, math.nan, True, families.get(judge, ""))
        for judge, item, system in JudgeAbstention.objects.filter(answer__question__study=study).values_list(
            "judge", *answer
        )
    ]
    frame = pd.DataFrame(scored + declined, columns=columns)
    frame = frame.astype({"score": float, "probability": float, "abstained": bool})
    return frame.sort_values(["judge", "item", "system"], kind="stable").reset_index(drop=True)
