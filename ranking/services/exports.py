"""Exporting a study's judgements: CSV / Parquet (one row per ranker × answer), SHROOM-style JSON, and the
rankings as pairwise preferences (JSON Lines, as preference-tuning libraries read them); nugget studies' labels and
sentence marks through :mod:`ranking.services.nugget_exports`.

Rankers appear under their pseudonym unless ``identities`` is asked for (organizers only, and audited). The
preference file counts the physicians and never names them, so ``identities`` does not apply to it.
"""

from __future__ import annotations

import io
import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations

import pandas as pd
from django.db.models import QuerySet

from portal import csv_cells
from portal.audit import audit_export
from portal.errors import DomainError
from portal.models import User
from ranking.models import AnswerJudgement, RankingTask, Study, StudyAnswer
from ranking.rules.spans import derived_label
from ranking.selectors.spans import study_span_labels
from ranking.services.nugget_exports import NUGGET_FORMATS, nugget_export_chunks
from ranking.services.span_exports import SPAN_FORMATS, span_export

RANKING_FORMATS = ("csv", "parquet", "shroom", "preferences")
#: Formats that count the physicians and never name them: asking for identities there is refused.
UNNAMED_FORMATS = ("preferences",)
FORMATS = (*RANKING_FORMATS, *NUGGET_FORMATS, *SPAN_FORMATS)
CONTENT_TYPES = {
    "csv": "text/csv",
    "parquet": "application/vnd.apache.parquet",
    "shroom": "application/json",
    "preferences": "application/x-ndjson",
    "nugget-labels": "application/x-ndjson",
    "nugget-csv": "text/csv",
    "sentence-marks": "text/csv",
    "spans-jsonl": "application/x-ndjson",
    "spans-csv": "text/csv",
    "spans-parquet": "application/vnd.apache.parquet",
}
EXTENSIONS = {
    "csv": "csv",
    "parquet": "parquet",
    "shroom": "json",
    "preferences": "jsonl",
    "nugget-labels": "jsonl",
    "nugget-csv": "csv",
    "sentence-marks": "csv",
    "spans-jsonl": "jsonl",
    "spans-csv": "csv",
    "spans-parquet": "parquet",
}
# What each format's file holds, for its file name (the extension says the format).
EXPORT_CONTENTS = {
    "csv": "rankings",
    "parquet": "rankings",
    "shroom": "rankings-shroom",
    "preferences": "preferences",
    "nugget-labels": "nugget-labels",
    "nugget-csv": "nugget-labels",
    "sentence-marks": "sentence-marks",
    "spans-jsonl": "rankings-spans",
    "spans-csv": "rankings-spans",
    "spans-parquet": "rankings-spans",
}
FORMAT_LABELS = {
    "csv": "CSV",
    "parquet": "Parquet",
    "shroom": "SHROOM",
    "preferences": "preference pairs (JSONL)",
    "nugget-labels": "nugget labels (JSONL)",
    "nugget-csv": "nugget labels (CSV)",
    "sentence-marks": "sentence marks (CSV)",
    "spans-jsonl": "hallucination spans (Mu-SHROOM JSONL)",
    "spans-csv": "hallucination spans (CSV)",
    "spans-parquet": "hallucination spans (Parquet)",
}
COLUMNS = [
    "study",
    "item_uid",
    "qa_type",
    "system",
    "is_reference",
    "ranker",
    "presented_position",
    "slot",
    "rank",
    "tag",
    "hallucination",
    "hallucination_kind",
    "harm",
    "time_spent_ms",
    "submitted_at",
]


def _judgements(study: Study) -> QuerySet[AnswerJudgement]:
    return (
        AnswerJudgement.objects.filter(task__study=study, task__status=RankingTask.Status.SUBMITTED)
        .select_related("task__ranker", "answer__system", "answer__question__item")
        .order_by("answer__question__position", "task__submitted_at", "position")
    )


def _ranker_label(user: User, identities: bool) -> str:
    return user.email if identities else user.pseudonym


def rankings_frame(*, study: Study, identities: bool = False) -> pd.DataFrame:
    """One row per ranker × answer of every submitted task, columns :data:`COLUMNS`."""
    rows = [
        {
            "study": study.name,
            "item_uid": j.answer.question.item.uid,
            "qa_type": j.answer.question.item.qa_type,
            "system": j.answer.system.name,
            "is_reference": j.answer.system.is_reference,
            "ranker": _ranker_label(j.task.ranker, identities),
            "presented_position": j.position,
            "slot": j.slot,
            "rank": j.rank,
            "tag": j.tag,
            "hallucination": j.hallucination,
            "hallucination_kind": j.hallucination_kind or None,
            "harm": j.harm,
            "time_spent_ms": j.task.time_spent_ms,
            "submitted_at": j.task.submitted_at,
        }
        for j in _judgements(study)
    ]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    for name in ("hallucination", "harm"):
        frame[name] = frame[name].astype("boolean")
    frame["time_spent_ms"] = frame["time_spent_ms"].astype("Int64")
    return frame


def shroom_records(*, study: Study, identities: bool = False) -> list[dict]:
    """Per answer: every rater's hallucination label, the majority label, and the share who said hallucination.

    ``label`` is "Hallucination" when more than half said so (a tie is not a majority), as in SHROOM's hard labels;
    ``p(Hallucination)`` is the soft label. In a span study a rater's label is derived from their spans (any span:
    hallucination; kind: :func:`ranking.rules.spans.derived_label`), with or without a ranking, so the item label and
    the spans never disagree.
    """
    if not (study.ask_hallucination or study.ask_spans):
        raise DomainError("this study did not ask about hallucinations", code="no_hallucination_labels")
    answers: dict[int, dict] = {}
    labels: dict[int, list[dict]] = defaultdict(list)
    for answer, annotator, hallucination, kind, harm in _hallucination_votes(study, identities):
        answers.setdefault(
            answer["id"],
            {
                "study": study.name,
                "item_uid": answer["item_uid"],
                "qa_type": answer["qa_type"],
                "system": answer["system"],
                "is_reference": answer["is_reference"],
                "model_output_text": answer["text"],
            },
        )
        labels[answer["id"]].append(
            {
                "annotator": annotator,
                "label": "Hallucination" if hallucination else "Not Hallucination",
                "kind": kind or None,
                "harm": harm,
            }
        )
    records = []
    for answer_id, record in answers.items():
        votes = labels[answer_id]
        share = sum(v["label"] == "Hallucination" for v in votes) / len(votes)
        records.append(
            {
                **record,
                "annotations": votes,
                "label": "Hallucination" if share > 0.5 else "Not Hallucination",
                "p(Hallucination)": round(share, 6),
                "n_annotators": len(votes),
            }
        )
    return records


def _hallucination_votes(
    study: Study, identities: bool
) -> Iterator[tuple[dict, str, bool | None, str | None, bool | None]]:
    """(answer, annotator, hallucination, kind, harm) per rater and answer: in a span study derived from the spans
    (the one reading of them, :func:`ranking.selectors.spans.study_span_labels`; an answer without spans in a
    submitted task was read and found clean), else from the ranking form."""
    if not study.ask_spans:
        for j in _judgements(study):
            answer = {
                "id": j.answer_id,
                "item_uid": j.answer.question.item.uid,
                "qa_type": j.answer.question.item.qa_type,
                "system": j.answer.system.name,
                "is_reference": j.answer.system.is_reference,
                "text": j.answer.text,
            }
            yield answer, _ranker_label(j.task.ranker, identities), j.hallucination, j.hallucination_kind, j.harm
        return
    harms = {
        (ranker, answer): harm
        for ranker, answer, harm in AnswerJudgement.objects.filter(
            task__study=study, task__status=RankingTask.Status.SUBMITTED
        ).values_list("task__ranker_id", "answer_id", "harm")
    }
    for labelled in study_span_labels(study, identities=identities):
        answer = {
            "id": labelled.answer_id,
            "item_uid": labelled.item_uid,
            "qa_type": labelled.qa_type,
            "system": labelled.system,
            "is_reference": labelled.is_reference,
            "text": labelled.text,
        }
        for annotation in labelled.annotations:
            hallucination, kind = derived_label(annotation.spans)
            yield answer, annotation.label, hallucination, kind, harms.get((annotation.ranker_id, labelled.answer_id))


@dataclass(frozen=True)
class _RankedAnswer:
    """One answer of a question with its rank (1 = best) in each submitted task, by ranker id."""

    system: str
    text: str
    ranks: dict[int, int]


def preference_records(*, study: Study) -> list[dict]:
    """The rankings as pairwise preferences: one record per question and pair of its answers that some physician
    ranked both of, in queue order, then by the pair's system names (the reference answer is one more system,
    named as in the other exports).

    ``prompt``, ``chosen``, ``rejected`` are what TRL's DPO trainer reads. Each physician who ranked both answers
    prefers one (the lower rank) or ties them; the record's direction is the majority of those physicians, an even
    split going to the lower mean rank. ``tie`` is true when neither decides: ``chosen`` and ``rejected`` are then
    in system-name order and ``agreement`` is the share who tied them; otherwise ``agreement`` is the share who
    preferred ``chosen``. Ties are kept, flagged, so that nothing the physicians said is lost: a trainer that
    expects strict preferences filters on ``tie``. Physicians are counted, never named.
    """
    if not study.ask_ranking:
        raise DomainError("this study did not ask for rankings", code="no_rankings")
    return [
        record
        for item_uid, prompt, answers in _ranked_answers(study)
        for first, second in combinations(answers, 2)
        if (record := _preference_record(item_uid, prompt, first, second)) is not None
    ]


def _ranked_answers(study: Study) -> Iterator[tuple[str, str, list[_RankedAnswer]]]:
    """(item uid, question text, its answers by system name) per question in queue order, with the ranks of the
    submitted tasks only."""
    ranks: dict[int, dict[int, int]] = defaultdict(dict)
    for answer_id, ranker_id, rank in AnswerJudgement.objects.filter(
        task__study=study, task__status=RankingTask.Status.SUBMITTED
    ).values_list("answer_id", "task__ranker_id", "rank"):
        ranks[answer_id][ranker_id] = rank
    questions: dict[int, tuple[str, str, list[_RankedAnswer]]] = {}
    for answer_id, question_id, uid, question, system, text in (
        StudyAnswer.objects.filter(question__study=study)
        .order_by("question__position", "question_id")
        .values_list("pk", "question_id", "question__item__uid", "question__item__question", "system__name", "text")
    ):
        questions.setdefault(question_id, (uid, question, []))[2].append(
            _RankedAnswer(system=system, text=text, ranks=ranks.get(answer_id, {}))
        )
    for uid, question, answers in questions.values():
        yield uid, question, sorted(answers, key=lambda a: a.system)


def _preference_record(item_uid: str, prompt: str, first: _RankedAnswer, second: _RankedAnswer) -> dict | None:
    """The record of one pair (``first`` before ``second`` by system name); None when nobody ranked both."""
    both = first.ranks.keys() & second.ranks.keys()
    if not both:
        return None
    prefer_first = sum(first.ranks[p] < second.ranks[p] for p in both)
    prefer_second = sum(second.ranks[p] < first.ranks[p] for p in both)
    tied = len(both) - prefer_first - prefer_second
    # Positive: the second answer wins. The rank sums are over the same physicians, so they compare as means do.
    leaning = (prefer_second - prefer_first) or (sum(first.ranks[p] for p in both) - sum(second.ranks[p] for p in both))
    chosen, rejected = (second, first) if leaning > 0 else (first, second)
    n_chosen, n_rejected = (prefer_second, prefer_first) if leaning > 0 else (prefer_first, prefer_second)
    return {
        "prompt": prompt,
        "chosen": chosen.text,
        "rejected": rejected.text,
        "item_uid": item_uid,
        "chosen_system": chosen.system,
        "rejected_system": rejected.system,
        "n_physicians": len(both),
        "n_prefer_chosen": n_chosen,
        "n_prefer_rejected": n_rejected,
        "n_tied": tied,
        "agreement": round((tied if leaning == 0 else n_chosen) / len(both), 6),
        "tie": leaning == 0,
    }


def study_formats(study: Study) -> list[tuple[str, str]]:
    """(format, label) of the downloads that fit what the study asked."""
    wanted = (
        (RANKING_FORMATS if study.ask_ranking else ("shroom",) if study.ask_spans else ())
        + (NUGGET_FORMATS if study.ask_nuggets else ())
        + (SPAN_FORMATS if study.ask_spans else ())
    )
    return [(fmt, FORMAT_LABELS[fmt]) for fmt in wanted]


#: Formats read and written a batch at a time while they are downloaded (see :func:`rankings_export_chunks`).
STREAMED_FORMATS = NUGGET_FORMATS


def rankings_export(
    *, study: Study, fmt: str, identities: bool = False, blind_systems: bool = False, user: User | None = None
) -> bytes:
    """The export as bytes (``fmt``: csv, parquet, shroom, preferences, or for nugget studies nugget-labels,
    nugget-csv, sentence-marks, for span studies spans-jsonl, spans-csv, spans-parquet); audited, since it may carry
    identities (never in :data:`UNNAMED_FORMATS`: asking for them there is refused). ``blind_systems`` (span
    exports): systems as "system 1", "system 2"…."""
    chunks = rankings_export_chunks(study=study, fmt=fmt, identities=identities, blind_systems=blind_systems, user=user)
    return b"".join(chunks)


def rankings_export_chunks(
    *, study: Study, fmt: str, identities: bool = False, blind_systems: bool = False, user: User | None = None
) -> Iterator[bytes]:
    """:func:`rankings_export` as chunks for a streamed download. Checked and audited at once (a refusal is raised
    here, before any byte); the nugget formats are then read and written a few thousand rows at a time as the
    download is sent (a large study's million labels never held at once), the others are built whole."""
    if fmt not in FORMATS:
        raise DomainError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if identities and fmt in UNNAMED_FORMATS:
        # Refused rather than ignored: a file named "identified" (or an audit entry saying so) would be untrue.
        raise DomainError(
            f"the {fmt} file counts the physicians and never names them: identities do not apply",
            code="no_identities",
        )
    if fmt in NUGGET_FORMATS:
        chunks = nugget_export_chunks(study=study, fmt=fmt, identities=identities)
    elif fmt in SPAN_FORMATS:
        chunks = iter([span_export(study=study, fmt=fmt, identities=identities, blind_systems=blind_systems)])
    elif fmt == "shroom":
        records = shroom_records(study=study, identities=identities)
        chunks = iter([json.dumps(records, ensure_ascii=False, indent=1).encode()])
    elif fmt == "preferences":
        lines = (json.dumps(record, ensure_ascii=False) + "\n" for record in preference_records(study=study))
        chunks = iter(["".join(lines).encode("utf-8")])
    else:
        frame = rankings_frame(study=study, identities=identities)
        if fmt == "csv":
            chunks = iter([csv_cells.guard_frame(frame).to_csv(index=False).encode("utf-8")])
        else:
            buffer = io.BytesIO()
            frame.to_parquet(buffer, index=False, engine="pyarrow")
            chunks = iter([buffer.getvalue()])
    audit_export(actor=user, obj=study, action="rankings_exported", fmt=fmt, identities=identities)
    return chunks
