"""Automatic hallucination detectors of a study: their span predictions imported from a Mu-SHROOM JSON Lines file,
and their scores against the physicians' spans (README "Hallucination spans").

A prediction file has one line per answer: ``id`` (the answer's id in the study's span export), ``soft_labels``
(``[{"start", "end", "prob"}]``, may be empty) and optionally ``hard_labels`` (derived from the soft labels when
absent, as the official scorer does) and ``model_output_text`` (then it must be the answer's text), read by the
one strict reader :func:`metrics.span_io.read_spans_jsonl`. All or nothing: the first problem refuses the whole
file naming the file, the line (from 1) and the field, and nothing changes. Importing a detector again replaces its
predictions.

Scores: per answer the official :func:`metrics.spans.score_iou` (hard labels) and :func:`metrics.spans.score_cor`
(soft labels) against the physicians' labels (:func:`ranking.span_selectors.study_span_labels`), over the answers
at least one physician read and the detector predicted; means with 95 % bootstrap intervals resampling answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from django.db import transaction

from analytics.judge_import import judge_name_problem
from analytics.models import SpanDetector, SpanPrediction
from analytics.nugget_selectors import study_physician_pseudonyms
from metrics.span_io import read_spans_jsonl
from metrics.spans import score_cor, score_iou
from portal.audit import audit_record
from ranking.models import Study
from ranking.span_selectors import AnswerSpans, study_span_labels
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
    answers = {a.answer_key: a for a in study_span_labels(study)}
    records = read_spans_jsonl(source, name=name, require_text=False)
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
    return DetectorImport(file=name, detector=detector, predictions=len(rows), replaced=replaced)


def study_span_predictions(study: Study, *, question_id: int | None = None) -> dict[str, dict[int, SpanPrediction]]:
    """detector name -> answer id -> its prediction (``question_id``: only that question's answers)."""
    out: dict[str, dict[int, SpanPrediction]] = {}
    rows = SpanPrediction.objects.filter(detector__study=study)
    if question_id is not None:
        rows = rows.filter(answer__question_id=question_id)
    for p in rows.select_related("detector").order_by("detector__name"):
        out.setdefault(p.detector.name, {})[p.answer_id] = p
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


def detector_leaderboard(study: Study, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> dict:
    """``{"n_answers", "detectors": [{"name", "iou", "cor", "n", "missing", "systems": [{"system", "iou", "cor"}]}]}``
    best IoU first (undefined last); ``iou`` / ``cor`` are :class:`StatResult` s; ``missing``: read answers the
    detector did not predict (left out of its scores)."""
    read = [a for a in study_span_labels(study) if a.n_annotators]
    return detector_rows(read, study_span_predictions(study), n_resamples=n_resamples, seed=seed)


def detector_rows(
    read: list[AnswerSpans],
    predictions: dict[str, dict[int, SpanPrediction]],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict:
    """The leaderboard of :func:`detector_leaderboard` from the answers physicians read and each detector's
    predictions by answer id (no database: ``bench/bench_spans.py`` times it at a large study's size)."""
    # The physicians' labels of an answer are the same for every detector: derived once, not once per detector.
    labels = {a.answer_id: (a.hard_labels, a.soft_labels, len(a.text)) for a in read}
    rows = []
    for name, predicted in predictions.items():
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
    rows.sort(key=lambda r: (r["iou"].value is None, -(r["iou"].value or 0.0), r["name"]))
    return {"n_answers": len(read), "detectors": rows}
