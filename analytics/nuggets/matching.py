"""The nugget matcher in the portal: every answer of a nugget study labelled by :class:`metrics.nuggets.EmbeddingMatcher`
with the portal's sentence model, stored as :class:`~analytics.models.JudgeNuggetLabel` rows of labeller "matcher".

A run replaces the matcher's earlier labels of the study in one transaction, so a page never shows half of two
runs, and a redelivered job writes the same rows again. The thresholds come from settings
(``NUGGET_SUPPORT_THRESHOLD`` / ``NUGGET_PARTIAL_THRESHOLD``) and are recorded on the job and its result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction

from analytics.embeddings import settings_encoder
from analytics.models import JudgeNuggetLabel
from analytics.nuggets.board import nugget_board_refresh
from analytics.nuggets.selectors import nugget_questions, study_answers
from evaluation.nuggets import MATCHER
from metrics.nuggets import EmbeddingMatcher, Nugget, sentence_encoder
from portal.audit import audit_record
from portal.errors import DomainError
from portal.jobs import Progress, job_start
from ranking.models import Study

if TYPE_CHECKING:
    from portal.models import Job, User

#: Answers matched per encoder call: large enough to batch the model well, small enough for a lively progress bar.
CHUNK_ANSWERS = 200


def matcher_thresholds() -> dict[str, float]:
    """The thresholds a matcher job runs with now (settings; BioACE's defaults)."""
    return {
        "support_threshold": float(settings.NUGGET_SUPPORT_THRESHOLD),
        "partial_threshold": float(settings.NUGGET_PARTIAL_THRESHOLD),
    }


def nugget_matcher_request(*, study: Study, user: User | None = None) -> Job:
    """Queue the job that runs the matcher on every answer of ``study``. DomainError if the study has no nugget
    question or the configured thresholds are unusable (checked here, before any job exists)."""
    if not nugget_questions(study).exists():
        raise DomainError(f"study “{study.name}” has no questions with validated nuggets: nothing to match")
    thresholds = matcher_thresholds()
    try:
        EmbeddingMatcher(lambda texts: None, **thresholds)
    except ValueError as exc:
        raise DomainError(f"the matcher's thresholds in settings are unusable: {exc}") from exc
    return job_start(kind="nugget_matcher", params={"study_id": study.pk, **thresholds}, user=user)


def nugget_matcher_run(
    *,
    study: Study,
    support_threshold: float,
    partial_threshold: float,
    job: Job | None = None,
    progress: Progress | None = None,
    encode: Callable | None = None,
) -> dict:
    """Label every answer × nugget of the study's nugget questions and replace the matcher's labels.

    ``encode``: the matcher's encoder (tests pass a fake one); default the worker's loaded model
    (:func:`analytics.embeddings.settings_encoder`, which shares the embedding store with scoring).
    """
    if encode is None:
        encode = sentence_encoder(settings_encoder())
    matcher = EmbeddingMatcher(
        encode, support_threshold=support_threshold, partial_threshold=partial_threshold, name=MATCHER
    )
    nuggets: dict[int, list[Nugget]] = {}
    rows: dict[int, dict[str, object]] = {}
    for question in nugget_questions(study):
        stored = list(question.nugget_set.nuggets.all())
        nuggets[question.pk] = [Nugget(n.key, n.text, n.importance) for n in stored]
        rows[question.pk] = {n.key: n for n in stored}
    answers = [a for a in study_answers(study) if nuggets.get(a.question_id)]
    if progress is not None:
        progress.start(len(answers), f"matching nuggets: {len(answers)} answers")
    labels: list[JudgeNuggetLabel] = []
    for start in range(0, len(answers), CHUNK_ANSWERS):
        chunk = answers[start : start + CHUNK_ANSWERS]
        matches = matcher.match_many([(nuggets[a.question_id], a.text) for a in chunk])
        for answer, found in zip(chunk, matches, strict=True):
            labels += [
                JudgeNuggetLabel(
                    answer=answer,
                    nugget=rows[answer.question_id][m.nugget_id],
                    labeller=MATCHER,
                    source=JudgeNuggetLabel.Source.MATCHER,
                    label=m.label,
                    sentence_index=m.sentence_index,
                    evidence=m.sentence,
                    similarity=m.similarity,
                    job=job,
                )
                for m in found
            ]
        if progress is not None:
            progress.advance(len(chunk), f"matching nuggets: {start + len(chunk)} of {len(answers)} answers")
    with transaction.atomic():
        replaced, _ = JudgeNuggetLabel.objects.filter(answer__question__study=study, labeller=MATCHER).delete()
        JudgeNuggetLabel.objects.bulk_create(labels, batch_size=2000)
        counts = {label: sum(1 for x in labels if x.label == label) for label in ("support", "partial", "not_support")}
        audit_record(
            actor=job.created_by if job is not None else None,
            obj=study,
            action="nugget_matcher_run",
            after={"labels": len(labels), "replaced": replaced, **counts, **matcher_thresholds_of(matcher)},
        )
        nugget_board_refresh(study=study, user=job.created_by if job is not None else None)
    return {
        "study_id": study.pk,
        "answers": len(answers),
        "labels": len(labels),
        "replaced": replaced,
        **counts,
        **matcher_thresholds_of(matcher),
    }


def matcher_thresholds_of(matcher: EmbeddingMatcher) -> dict[str, float]:
    return {"support_threshold": matcher.support_threshold, "partial_threshold": matcher.partial_threshold}
