"""One very large scoring run scored by several workers at once, in slices of its open-ended answers.

The run's first task computes what the whole submission shares (:func:`metrics.scorer.scoring_state`: the IDF
table over every answer, the paragraph baseline from its seeded sample), stores it on the run and cuts the
open-ended answers into slices of ``METRIC_SLICE_ITEMS`` (:func:`scoring_run_slice`). Any worker scores a
slice with that state (:func:`scoring_slice_score`): its answers' scores are written at once, and the metric's
records kept on the slice. The last slice to finish queues the run's final task, which combines the records
with the closed-ended types into the summary (:func:`analytics.scoring.runs.scoring_run_execute`). The three passes
are the same code a run in one process goes through, so the numbers are the same.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.db.models import F

from analytics.embeddings import settings_encoder
from analytics.models import ScoringRun, ScoringSlice
from analytics.scoring.runs import (
    answer_scores,
    answer_scores_store,
    run_part_done,
    scoring_inputs,
    settings_text_metrics,
)
from metrics.scorer import ScoringState, compared_items, score_slice, scoring_state, usable_submission
from metrics.summary import item_row


def scoring_run_slice(*, run: ScoringRun, slice_items: int | None = None) -> list[ScoringSlice]:
    """The run's slices still to score, created with the run's shared state on the first call; empty when the
    run has no more than ``slice_items`` (default ``METRIC_SLICE_ITEMS``; 0: never) open-ended answers.

    Calling it again (a redelivered task) creates nothing new and returns the slices not done.
    """
    if run.slices.exists():
        return list(run.slices.filter(done_at__isnull=True))
    size = settings.METRIC_SLICE_ITEMS if slice_items is None else slice_items
    if size <= 0:
        return []
    inputs, responses, _, _ = scoring_inputs(run)
    usable, cleaned, _ = usable_submission(inputs, responses)
    n_open = sum(len(items) for items in compared_items(usable, cleaned)[0].values())
    if n_open <= size:
        return []
    state = scoring_state(
        inputs,
        responses,
        profile=run.profile,
        seed=run.seed,
        encoder=settings_encoder(),
        stopwords_version=settings.METRIC_STOPWORDS_VERSION,
    )
    parts = [
        ScoringSlice(run=run, index=i, start=start, stop=min(start + size, n_open))
        for i, start in enumerate(range(0, n_open, size))
    ]
    with transaction.atomic():
        # Under the run's lock: a concurrent redelivery waits, then finds the slices and the same state.
        locked = ScoringRun.objects.select_for_update().get(pk=run.pk)
        if not locked.slices.exists():
            ScoringRun.objects.filter(pk=run.pk).update(scoring_state=state.to_json())
            ScoringSlice.objects.bulk_create(parts)
    return list(run.slices.filter(done_at__isnull=True))


def scoring_slice_score(*, part: ScoringSlice) -> bool:
    """Score the slice's answers, store their scores and the slice's records, mark it done; True when no slice
    of its run is left (the caller then queues the final task)."""

    ScoringSlice.objects.filter(pk=part.pk).update(attempts=F("attempts") + 1)
    run = ScoringRun.objects.get(pk=part.run_id)  # its state as stored by the first task
    inputs, responses, keys, _ = scoring_inputs(run)
    state = ScoringState.from_json(run.scoring_state)
    records = score_slice(
        inputs,
        responses,
        state,
        part.start,
        part.stop,
        profile=run.profile,
        encoder=settings_encoder(),
        text_metrics=settings_text_metrics(),
    )
    rows = [item_row(qa_type, record) for qa_type, record in records]
    with transaction.atomic():
        answer_scores_store(answer_scores(run, keys, rows))
        return run_part_done(
            parts=ScoringSlice.objects.filter(run_id=run.pk),
            part_pk=part.pk,
            units=part.stop - part.start,
            what="scoring answers",
            noun="slices",
            records=[list(record) for record in records],
        )
