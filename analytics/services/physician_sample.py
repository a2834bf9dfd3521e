"""A designed physician sample (issue #43): physicians rank only a drawn share of a study's questions, each drawn
with a known probability, so that the report can weight each by 1/its chance and its estimates stay valid
(:func:`stats.ppi.design_mean_ci`).

Drawn once a judge's scores are imported and before any ranking task exists (a question already handed out could
not be taken back without biasing the sample). Poisson sampling: question i is drawn independently with
probability π_i, so the number drawn varies around the expected size; π_i = expected size × weight_i / Σ weight,
capped at 1 with the excess spread over the others (repeated until none is over 1). Designs and their weights:

* ``uniform``: every question weighs the same (π = n/N); no judge needed;
* ``judge_uncertain``: towards questions where the judge is least certain: its scores mapped to [0, 1] over its
  scores of this study's model answers (lowest 0, highest 1), a question weighs the mean over its model answers of
  1 − |2s − 1|: 1 for a score of 0.5, 0 for 0 or 1;
* ``systems_differ``: towards questions where the judge sees the systems differ most: the variance (ddof 0) of those
  mapped scores across the question's model answers.

A question the judge did not score (or, for ``systems_differ``, scored for fewer than two systems) weighs as much
as the heaviest question: nothing is known of it. Every weight is mixed with the uniform one
(:data:`FLOOR` of it), so every question has at least that share of the uniform chance: each can be drawn, and
no weight 1/π grows without bound.
"""

from __future__ import annotations

import math
import secrets
from collections import defaultdict

import numpy as np
from django.db import transaction
from django.utils import timezone

from analytics.models import JudgeScore
from portal.audit import audit_record
from portal.errors import DomainError
from portal.models import User
from ranking.models import RankingTask, Study, StudyQuestion

DESIGNS = ("uniform", "judge_uncertain", "systems_differ")
#: The share of the uniform chance every question keeps whatever its weight.
FLOOR = 0.02


def physician_sample_draw(
    study: Study,
    *,
    share: float | None = None,
    number: int | None = None,
    design: str = "uniform",
    judge: str | None = None,
    seed: int | None = None,
    by: User | None = None,
) -> Study:
    """Draw the physicians' sample of ``study`` (``share`` of its questions or ``number`` of them expected), store
    each question's chance and whether it was drawn, record the design on the study and audit it. Drawing again
    before any task exists replaces the sample. Raises :class:`DomainError` when refused (see the checks)."""
    if design not in DESIGNS:
        raise DomainError(f"Unknown design {design!r}: choose one of {', '.join(DESIGNS)}.")
    if design != "uniform" and not judge:
        raise DomainError(f"The design {design!r} needs a judge whose scores are imported into the study.")
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    if seed < 0:  # numpy's generator takes none: a page's "-5" was a 500
        raise DomainError(f"The seed must be a whole number of 0 or more, not {seed}.")
    with transaction.atomic():
        # the question rows first, as the queue locks them: no task can be created on them while we draw
        questions = list(StudyQuestion.objects.select_for_update().filter(study=study).order_by("position"))
        if RankingTask.objects.filter(study=study).exists():
            raise DomainError("Physicians have started on this study: its sample can no longer be drawn.")
        expected = expected_size(len(questions), share=share, number=number)
        weights = np.ones(len(questions))
        if design != "uniform" or judge:
            scores = _judge_scores(study, judge or "", [q.pk for q in questions])
            if design != "uniform":
                weights = design_weights(design, [scores.get(q.pk, []) for q in questions])
        chances = inclusion_probabilities(weights, expected)
        drawn = np.random.default_rng(seed).random(len(questions)) < chances
        for question, chance, sampled in zip(questions, chances, drawn, strict=True):
            question.inclusion_probability = float(chance)
            question.physician_sampled = bool(sampled)
        StudyQuestion.objects.bulk_update(questions, ["inclusion_probability", "physician_sampled"])
        before = study.physician_sample or None
        study.physician_sample = {
            "design": design,
            "judge": judge or None,
            **({"share": share} if share is not None else {"number": number}),
            "expected_size": expected,
            "questions": len(questions),
            "sampled": int(drawn.sum()),
            "seed": seed,
            "drawn_at": timezone.now().isoformat(),
            "by": by.pk if by is not None else None,
        }
        study.save(update_fields=["physician_sample"])
        audit_record(actor=by, obj=study, action="physician_sample_drawn", before=before, after=study.physician_sample)
    return study


def expected_size(questions: int, *, share: float | None, number: int | None) -> float:
    """The expected number drawn: ``share`` × the questions, or ``number``; refused outside (0, 1] or 1..N."""
    if (share is None) == (number is None):
        raise DomainError("Give either a share of the questions or a number of them, not both.")
    if questions == 0:
        raise DomainError("The study has no questions to draw from.")
    if share is not None:
        if not 0 < share <= 1:
            raise DomainError(f"The share must be more than 0 and at most 1, not {share}.")
        return share * questions
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= questions:
        raise DomainError(f"The number of questions must be a whole number from 1 to {questions}, not {number}.")
    return float(number)


def inclusion_probabilities(weights: np.ndarray | list[float], expected: float, floor: float = FLOOR) -> np.ndarray:
    """Each question's chance: ``expected`` × its weight's share (mixed with ``floor`` of the uniform share),
    capped at 1, the excess spread over the others in proportion, until none is over 1. Sums to ``expected``."""
    weights = np.asarray(weights, dtype=float)
    count = weights.size
    total = weights.sum()
    share = weights / total if total > 0 else np.full(count, 1 / count)
    mixed = (1 - floor) * share + floor / count
    chances = np.ones(count)
    capped = np.zeros(count, dtype=bool)
    while not capped.all():
        rest = ~capped
        chances[rest] = (expected - capped.sum()) * mixed[rest] / mixed[rest].sum()
        over = rest & (chances >= 1)
        if not over.any():
            break
        capped |= over
        chances[capped] = 1.0
    return chances


def design_weights(design: str, scores: list[list[float]]) -> np.ndarray:
    """Each question's weight under ``design`` from the judge's scores of its model answers (module docstring)."""
    known = [s for per_question in scores for s in per_question]
    low, high = (min(known), max(known)) if known else (0.0, 1.0)
    spread = high - low
    weights = []
    for per_question in scores:
        mapped = np.array([(s - low) / spread if spread else 0.5 for s in per_question])
        if design == "judge_uncertain":
            weights.append(float(np.mean(1 - np.abs(2 * mapped - 1))) if mapped.size else np.nan)
        else:
            weights.append(float(np.var(mapped)) if mapped.size >= 2 else np.nan)
    values = np.array(weights, dtype=float)
    unknown = np.isnan(values)
    values[unknown] = np.nanmax(values) if (~unknown).any() else 1.0
    return values


def study_judges(study: Study) -> list[str]:
    """The names of the judges whose scores are imported into ``study``."""
    names = JudgeScore.objects.filter(answer__question__study=study).values_list("judge", flat=True)
    return sorted(set(names))


def _judge_scores(study: Study, judge: str, question_ids: list[int]) -> dict[int, list[float]]:
    """Question id → the judge's scores of its model answers (the reference answer left out, as in the report)."""
    rows = JudgeScore.objects.filter(
        answer__question_id__in=question_ids, judge=judge, answer__system__is_reference=False
    ).values_list("answer__question_id", "score")
    scores: dict[int, list[float]] = defaultdict(list)
    for question_id, score in rows:
        if math.isfinite(score):  # a score that is not a number says nothing of the question
            scores[question_id].append(float(score))
    if not scores:
        raise DomainError(f"No scores of a judge named {judge!r} are imported into this study.")
    return scores
