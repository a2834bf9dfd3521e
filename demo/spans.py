"""The demo's hallucination spans: the demo study asks for spans, both demo rankers' submitted tasks get span marks
on real words of the answers, and two demo detectors' predictions are imported through the service a lab's file
goes through (:func:`analytics.spans.detectors.span_detector_import`), so the detector leaderboard, the report's span
sections and the per-item view have content.

Deterministic: every choice is drawn from a generator seeded with the item and the system, so two fresh databases
get the same marks. The rankers agree on most spans and differ on some (one marks a word more, or nothing), both
kinds appear, and the wrong demo model is marked far more often than the exact one.
"""

from __future__ import annotations

import json
import random
import re

from django.db import transaction

from analytics.models import SpanDetector
from analytics.spans.detectors import span_detector_import
from ranking.models import AnswerJudgement, HallucinationSpan, RankingTask, Study, StudyAnswer
from ranking.rules.spans import MarkedSpan, derived_label
from ranking.selectors.spans import study_span_labels

SEED = "demo-spans-2025"
WORD = re.compile(r"\w+", re.UNICODE)
#: How often each system's answer holds a hallucination in the demo (the reference rarely does).
HALLUCINATION_ODDS = {"Demo model A": 0.3, "Demo model B": 0.85}
REFERENCE_ODDS = 0.1
DETECTORS = ("Demo detector (careful)", "Demo detector (eager)")


def _words(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in WORD.finditer(text)]


def _base_span(answer: StudyAnswer) -> tuple[int, int, str] | None:
    """The stretch a careful physician would mark in this answer (None: nothing), with its kind."""
    rng = random.Random(f"{SEED}|{answer.question.item.uid}|{answer.system.name}")
    odds = REFERENCE_ODDS if answer.system.is_reference else HALLUCINATION_ODDS.get(answer.system.name, 0.3)
    words = _words(answer.text)
    if rng.random() >= odds or not words:
        return None
    first = rng.randrange(len(words))
    last = min(len(words) - 1, first + rng.randint(1, 3))
    kind = "intrinsic" if answer.system.name == "Demo model B" and rng.random() < 0.7 else "extrinsic"
    return words[first][0], words[last][1], kind


def _ranker_spans(answer: StudyAnswer, second: bool) -> list[tuple[int, int, str, str]]:
    """The first ranker marks the base span; the second mostly agrees, sometimes marks a word more or nothing, and
    now and then marks something the first left alone."""
    base = _base_span(answer)
    rng = random.Random(f"{SEED}|second|{answer.question.item.uid}|{answer.system.name}")
    words = _words(answer.text)
    if not second:
        return [(base[0], base[1], base[2], "")] if base else []
    if base is None:
        if words and rng.random() < 0.15:
            start, end = words[rng.randrange(len(words))]
            return [(start, end, "other", "Not in the passage I was shown.")]
        return []
    draw = rng.random()
    if draw < 0.6:
        return [(base[0], base[1], base[2], "")]
    if draw < 0.85:
        following = [w for w in words if w[0] > base[1]]
        end = following[0][1] if following else base[1]
        kind = "intrinsic" if base[2] == "extrinsic" else base[2]
        return [(base[0], end, kind, "The following word is wrong too.")]
    return []


def _predictions(labels: list, answers: dict, careful: bool) -> list[str]:
    """A detector's JSONL lines: the careful one finds most base spans, the eager one flags the longest word of
    every answer."""
    lines = []
    for a in labels:
        rng = random.Random(f"{SEED}|{'careful' if careful else 'eager'}|{a.answer_key}")
        soft = []
        if careful:
            base = _base_span(answers[a.answer_id])
            if base and rng.random() < 0.75:
                soft = [{"start": base[0], "end": base[1], "prob": round(rng.uniform(0.6, 0.95), 2)}]
            elif rng.random() < 0.2 and (words := _words(a.text)):
                start, end = words[rng.randrange(len(words))]
                soft = [{"start": start, "end": end, "prob": 0.35}]
        elif words := _words(a.text):
            start, end = max(words, key=lambda w: w[1] - w[0])
            soft = [{"start": start, "end": end, "prob": round(rng.uniform(0.4, 0.9), 2)}]
        lines.append(json.dumps({"id": a.answer_key, "soft_labels": soft}))
    return lines


def demo_spans(users: dict, study_name: str) -> str:
    """Spans on the demo study's submitted tasks and two detectors' predictions; skipped without rankings and once
    the study has spans."""
    study = Study.objects.filter(name=study_name).first()
    tasks = RankingTask.objects.filter(study=study, status=RankingTask.Status.SUBMITTED).select_related("ranker")
    if study is None or not tasks.exists() or HallucinationSpan.objects.filter(task__study=study).exists():
        return ""
    answers = StudyAnswer.objects.filter(question__study=study).select_related("question__item", "system").in_bulk()
    first_ranker = min(t.ranker.email for t in tasks)
    marked = 0
    with transaction.atomic():
        if not study.ask_spans:
            study.ask_spans = True
            study.guidelines = (
                f"{study.guidelines.rstrip()} Then select the hallucinated words of each answer and give their kind "
                "(1 contradicts, 2 not supported, 3 other), or tick “No hallucination in this answer”."
            ).strip()
            study.save(update_fields=["ask_spans", "guidelines"])
        for task in tasks:
            for answer_id in task.order:
                spans = _ranker_spans(answers[answer_id], task.ranker.email != first_ranker)
                for start, end, kind, note in spans:
                    HallucinationSpan.objects.create(
                        task=task, answer_id=answer_id, start=start, end=end, kind=kind, note=note
                    )
                    marked += 1
                # the item-level label follows the spans, as a submission of a span study stores it
                hallucination, kind = derived_label([MarkedSpan(start, end, kind) for start, end, kind, _ in spans])
                AnswerJudgement.objects.filter(task=task, answer_id=answer_id).update(
                    hallucination=hallucination, hallucination_kind=kind
                )
    labels = [a for a in study_span_labels(study) if a.n_annotators]
    for name in DETECTORS:
        if not SpanDetector.objects.filter(study=study, name=name).exists():
            span_detector_import(
                study=study,
                detector=name,
                source=[line.encode() for line in _predictions(labels, answers, name == DETECTORS[0])],
                name=f"{name.split('(')[1].rstrip(')')}-detector.jsonl",
                user=users["organizer@demo.portal"],
            )
    return f"Hallucination spans: {marked} marked in “{study.name}”; {len(DETECTORS)} demo detectors imported."
