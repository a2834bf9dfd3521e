"""Automatic hallucination detectors of a study: their span predictions imported from a Mu-SHROOM JSON Lines file,
and their scores against the physicians' spans (README "Hallucination spans").

A prediction file has one line per answer: ``id`` (the answer's id in the study's span export), ``soft_labels``
(``[{"start", "end", "prob"}]``, may be empty) and optionally ``hard_labels`` (derived from the soft labels when
absent, as the official scorer does) and ``model_output_text`` (then it must be the answer's text), read by the
one strict reader :func:`metrics.span_io.read_spans_jsonl`. All or nothing: the first problem refuses the whole
file naming the file, the line (from 1) and the field, and nothing changes. Importing a detector again replaces its
predictions.

Scores: per answer the official :func:`metrics.spans.score_iou` (hard labels) and :func:`metrics.spans.score_cor`
(soft labels) against the physicians' labels (:func:`ranking.selectors.spans.study_span_labels`), over the answers
at least one physician read and the detector predicted; means with 95 % bootstrap intervals resampling answers.

The leaderboard is stored (:class:`analytics.models.SpanLeaderboard`): at a large study's size it takes too long for
a page (``bench/bench_spans.py``), so a job computes it after every import and when an organizer asks
(:func:`span_leaderboard_refresh`), and the page reads the stored one with what has changed since
(:func:`span_leaderboard_state`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from django.db import transaction

from analytics.boards import (
    BoardState,
    board_refresh,
    board_state,
    board_store,
    import_stamps,
    labeller_changes,
    stored_board,
    submission_changes,
)
from analytics.labellers import judge_name_problem
from analytics.models import SpanDetector, SpanLeaderboard, SpanPrediction
from analytics.selectors import study_physician_pseudonyms
from metrics.span_io import read_spans_jsonl
from metrics.spans import score_cor, score_iou
from portal.audit import audit_record
from portal.jobs import Progress
from ranking.models import Study, StudyAnswer
from ranking.selectors.spans import AnswerSpans, study_span_answer_texts, study_span_labels
from ranking.selectors.studies import study_submissions_stamp
from records.jsonl import InputFileError, Source
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_sums, with_interval
from stats.results import StatResult, undefined

if TYPE_CHECKING:
    from portal.models import User

#: Names a detector may not take: the physicians' own row on the pages.
RESERVED_DETECTOR_NAMES = ("physicians",)


@dataclass(frozen=True)
class DetectorImport:
    file: str
    detector: str
    predictions: int
    replaced: int


def _check_fits(name: str, line: int, field: str, runs: Iterable, length: int) -> None:
    for index, run in enumerate(runs, start=1):
        end = run["end"] if isinstance(run, dict) else run[1]
        if end > length:
            raise InputFileError(
                name,
                f"the span ends at {end}, after the answer's text ({length} characters)",
                line=line,
                field=f"{field} (entry {index})",
            )


def span_detector_import(
    *, study: Study, detector: str, source: Source, name: str, user: User | None
) -> DetectorImport:
    """Store ``detector``'s predictions from ``source`` (a path or an upload's lines) for ``study``'s answers.

    Refused with :class:`records.jsonl.InputFileError` (file, line, field): a study without spans, a detector name
    that is reserved, a physician's pseudonym or has other characters than letters, digits, spaces and
    ``. _ ( ) + -``; anything :func:`metrics.span_io.read_spans_jsonl` refuses; an id that is no answer of this
    study; a text that is not the answer's; a span ending after the answer's text.
    """
    if not study.ask_spans:
        raise InputFileError(name, "this study does not ask physicians for hallucination spans")
    detector = detector.strip()
    problem = judge_name_problem(detector, study_physician_pseudonyms(study), RESERVED_DETECTOR_NAMES)
    if problem:
        raise InputFileError(name, problem.replace("judge name", "detector name"), field="detector name")
    answers = study_span_answer_texts(study)
    records = read_spans_jsonl(source, name=name, require_text=False, prediction=True)
    rows = []
    for uid, record in records.items():
        answer = answers.get(uid)
        if answer is None:
            raise InputFileError(name, f"no answer of this study has id {uid!r}", line=record.line, field="id")
        if record.text is not None and record.text != answer.text:
            raise InputFileError(
                name, "is not the text of that answer in this study", line=record.line, field="model_output_text"
            )
        _check_fits(name, record.line, "soft_labels", record.soft_labels, len(answer.text))
        _check_fits(name, record.line, "hard_labels", record.hard_labels, len(answer.text))
        rows.append((answer.answer_id, record))
    with transaction.atomic():
        found, created = SpanDetector.objects.get_or_create(
            study=study, name=detector, defaults={"file": name, "imported_by": user}
        )
        replaced = 0 if created else found.predictions.all().delete()[0]
        if not created:
            SpanDetector.objects.filter(pk=found.pk).update(file=name, imported_by=user)
        SpanPrediction.objects.bulk_create(
            [
                SpanPrediction(
                    detector=found, answer_id=answer_id, soft_labels=r.soft_labels, hard_labels=r.hard_labels
                )
                for answer_id, r in rows
            ],
            batch_size=2000,
        )
        audit_record(
            actor=user,
            obj=study,
            action="span_detector_import",
            after={"file": name, "detector": detector, "predictions": len(rows), "replaced": replaced},
        )
        span_leaderboard_refresh(study=study, user=user)
    return DetectorImport(file=name, detector=detector, predictions=len(rows), replaced=replaced)


class Predicted(NamedTuple):
    """A detector's labels of one answer as the scores and pages read them (lighter than a model row: a large
    study has hundreds of thousands)."""

    soft_labels: list[dict]
    hard_labels: list[list[int]]


def study_span_predictions(study: Study, *, question_id: int | None = None) -> dict[str, dict[int, Predicted]]:
    """detector name -> answer id -> its prediction (``question_id``: only that question's answers)."""
    out: dict[str, dict[int, Predicted]] = {}
    rows = SpanPrediction.objects.filter(detector__study=study)
    if question_id is not None:
        # by the answers' ids: joined on the question instead, PostgreSQL walks every prediction of a large study
        answers = list(StudyAnswer.objects.filter(question_id=question_id).values_list("pk", flat=True))
        rows = rows.filter(answer_id__in=answers)
    for name, answer_id, soft, hard in rows.order_by("detector__name").values_list(
        "detector__name", "answer_id", "soft_labels", "hard_labels"
    ):
        out.setdefault(name, {})[answer_id] = Predicted(soft, hard)
    return out


def _means(values: np.ndarray, n_resamples: int, seed: int) -> tuple[StatResult, StatResult]:
    """Mean IoU and mean correlation over answers (rows of ``values``), with their bootstrap intervals."""
    if len(values) == 0:
        reason = "no answer both read by a physician and predicted by the detector"
        return undefined("iou", reason), undefined("cor", reason)
    n = len(values)
    iou = StatResult("iou", float(values[:, 0].mean()), n_items=n)
    cor = StatResult("cor", float(values[:, 1].mean()), n_items=n)
    if n_resamples > 0 and n > 1:
        outcome = bootstrap_sums(values, lambda sums: sums / n, n_resamples=n_resamples, seed=seed)
        iou, cor = with_interval(iou, outcome, 0), with_interval(cor, outcome, 1)
    return iou, cor


def detector_leaderboard(
    study: Study,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    progress: Progress | None = None,
) -> dict:
    """``{"n_answers", "detectors": [{"name", "iou", "cor", "n", "missing", "systems": [{"system", "iou", "cor"}]}]}``
    best IoU first (undefined last); ``iou`` / ``cor`` are :class:`StatResult` s; ``missing``: read answers the
    detector did not predict (left out of its scores)."""
    if progress is not None:
        progress.start(1, "reading the spans and predictions")
    read = [a for a in study_span_labels(study) if a.n_annotators]
    predictions = study_span_predictions(study)
    if progress is not None:
        progress.estimate(1 + len(predictions))  # one step a detector
        progress.advance(1)
    return detector_rows(read, predictions, n_resamples=n_resamples, seed=seed, progress=progress)


def detector_rows(
    read: list[AnswerSpans],
    predictions: dict[str, dict[int, Predicted]],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    progress: Progress | None = None,
) -> dict:
    """The leaderboard of :func:`detector_leaderboard` from the answers physicians read and each detector's
    predictions by answer id (no database: ``bench/bench_spans.py`` times it at a large study's size)."""
    # The physicians' labels of an answer are the same for every detector: derived once, not once per detector.
    labels = {a.answer_id: (a.hard_labels, a.soft_labels, len(a.text)) for a in read}
    rows = []
    for name, predicted in predictions.items():
        if progress is not None:
            progress.note(f"scoring {name}")
        scored = []
        for answer in read:
            prediction = predicted.get(answer.answer_id)
            if prediction is not None:
                hard, soft, length = labels[answer.answer_id]
                scores = (
                    score_iou(hard, prediction.hard_labels),
                    score_cor(soft, prediction.soft_labels, length),
                )
                scored.append((answer.system, scores))
        iou, cor = _means(np.array([s for _, s in scored], dtype=float).reshape(-1, 2), n_resamples, seed)
        systems = []
        for system in sorted({system for system, _ in scored}):
            values = np.array([s for of, s in scored if of == system], dtype=float).reshape(-1, 2)
            s_iou, s_cor = _means(values, n_resamples, seed)
            systems.append({"system": system, "iou": s_iou, "cor": s_cor})
        rows.append(
            {
                "name": name,
                "iou": iou,
                "cor": cor,
                "n": len(scored),
                "missing": len(read) - len(scored),
                "systems": systems,
            }
        )
        if progress is not None:
            progress.advance(1)
    rows.sort(key=lambda r: (r["iou"].value is None, -(r["iou"].value or 0.0), r["name"]))
    return {"n_answers": len(read), "detectors": rows}


def board_json(board: dict) -> dict:
    """A leaderboard as JSON to store (statistics as :meth:`StatResult.to_dict`)."""
    stats = ("iou", "cor")
    return {
        "n_answers": board["n_answers"],
        "detectors": [
            {
                **{k: v for k, v in row.items() if k not in (*stats, "systems")},
                **{k: row[k].to_dict() for k in stats},
                "systems": [{"system": s["system"], **{k: s[k].to_dict() for k in stats}} for s in row["systems"]],
            }
            for row in board["detectors"]
        ],
    }


def board_from_json(data: dict) -> dict:
    """The inverse of :func:`board_json`."""
    stats = ("iou", "cor")
    return {
        "n_answers": data["n_answers"],
        "detectors": [
            {
                **row,
                **{k: StatResult.from_dict(row[k], k) for k in stats},
                "systems": [
                    {"system": s["system"], **{k: StatResult.from_dict(s[k], k) for k in stats}} for s in row["systems"]
                ],
            }
            for row in data["detectors"]
        ],
    }


def span_leaderboard_inputs(study: Study) -> dict:
    """What the leaderboard is computed from: the physicians' judgements (their stamp) and, per detector, how many
    predictions it has and its newest one (an import replaces every row, so a new import shows as a new id)."""
    return {
        "labels": study_submissions_stamp(study),
        "detectors": import_stamps(SpanPrediction.objects.filter(detector__study=study), "detector__name"),
    }


def _changes(then: dict, now: dict) -> list[str]:
    """What differs between the inputs a leaderboard was computed from and today's, in words."""
    return submission_changes(then.get("labels") or {}, now["labels"]) + labeller_changes(
        then.get("detectors") or {}, now["detectors"], noun=lambda name: f"detector “{name}”"
    )


def span_leaderboard_board(study: Study) -> dict | None:
    """The stored leaderboard of ``study`` (None before the first is computed), without asking what changed since."""
    return stored_board(SpanLeaderboard, study, board_from_json)


def span_leaderboard_state(study: Study) -> BoardState[dict]:
    """The stored leaderboard of ``study`` and what has changed since it was computed."""
    return board_state(
        SpanLeaderboard, study, inputs=span_leaderboard_inputs(study), load=board_from_json, changes=_changes
    )


def span_leaderboard_refresh(*, study: Study, user: User | None = None) -> SpanLeaderboard:
    """Queue the job that computes ``study``'s leaderboard again, unless one is already queued or running."""
    return board_refresh(SpanLeaderboard, study=study, kind="span_leaderboard", user=user)


def span_leaderboard_compute(*, study_id: int, progress: Progress | None = None) -> SpanLeaderboard:
    """Compute and store the leaderboard of the study (the job's work; running it twice is harmless)."""
    study = Study.objects.get(pk=study_id)
    inputs = span_leaderboard_inputs(study)  # before the data are read (see board_store)
    board = detector_leaderboard(study, progress=progress)
    return board_store(SpanLeaderboard, study=study, inputs=inputs, result=board_json(board))
