"""Task-1 scoring inside the portal: a system's stored outputs scored with the pure ClinIQLink metric.

The model and the NLTK resources load once per worker process and are reused by every job it runs. Scores
are written with an upsert on (run, item), so a task that is killed and redelivered rewrites the same rows:
nothing is lost and nothing is duplicated.

Scale-out. Sentence embeddings, almost all of a run's work, go through the embedding store
(:mod:`analytics.embeddings`, PostgreSQL), so they are computed once for every worker and every later run (a
release's references are encoded by its first scoring run only). A run with more new texts than
``METRIC_CHUNK_TEXTS`` is split (:func:`scoring_run_split`): its texts are cut into chunks that any worker
encodes into the store (:func:`scoring_chunk_encode`), and the last chunk to finish queues the run's final
task, which scores with nothing left to encode. Several systems are several jobs, so more workers score
more systems at once as well.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from analytics.embeddings import DatabaseTextStore, settings_encoder
from analytics.models import AnswerScore, ScoringChunk, ScoringRun
from metrics import TextMetrics, score_submission
from metrics.free_text import score_free_text
from metrics.open_ended import OPEN_TYPES
from metrics.scorer import ScoringState, combine_slices, embedding_texts
from portal.errors import DomainError
from portal.jobs import Progress, job_part_progress
from ranking.models import SystemOutput

# Portal QA type → the metric's type (the harness output file stem).
METRIC_TYPE = {
    "true_false": "true_false",
    "multiple_choice": "multiple_choice",
    "list": "list",
    "short_answer": "short",
    "short_inverse": "short_inverse",
    "multi_hop": "multi_hop",
    "multi_hop_inverse": "multi_hop_inverse",
}
SCORE_FIELDS = [
    "semantic",
    "word",
    "sentence",
    "paragraph",
    "bleu",
    "rouge",
    "meteor",
    "correct",
    "precision",
    "recall",
    "f1",
    "predicted_step",
    "step_distance",
]


@functools.cache
def settings_text_metrics() -> TextMetrics:

    return TextMetrics(nltk_data_dir=settings.NLTK_DATA_DIR)


def scoring_inputs(
    run: ScoringRun,
) -> tuple[
    dict[str, list[dict]], dict[str, list], dict[str, list[tuple[int, int]]], list[tuple[int, int, str, str, str]]
]:
    """The submission the public scorer would see: per metric type, the dataset records (release order, or
    import order) and the system's raw responses; plus (item id, output id) per position. Answers to other
    benchmarks' items (PromptCBLUE) come separately as (item id, output id, QA type, reference, response), the
    reference being the ``target`` of the frozen record when the run is for a release."""

    outputs = SystemOutput.objects.filter(system=run.system).select_related("item")
    if run.release is not None:
        order = {item_id: pos for pos, item_id in run.release.items.values_list("position", "item_id")}
        outputs = outputs.filter(item_id__in=order)
        records = dict(run.release.items.values_list("item_id", "record"))
    else:
        order = None
        records = None
    rows = sorted(outputs, key=(lambda o: order[o.item_id]) if order else (lambda o: o.item_id))
    inputs: dict[str, list[dict]] = {}
    responses: dict[str, list] = {}
    keys: dict[str, list[tuple[int, int]]] = {}
    others: list[tuple[int, int, str, str, str]] = []
    for output in rows:
        metric_type = METRIC_TYPE.get(output.item.qa_type)
        if metric_type is None:  # other benchmarks (PromptCBLUE): no ClinIQLink metric, text metrics only
            reference = records[output.item_id].get("target", output.item.answer) if records else output.item.answer
            others.append((output.item_id, output.pk, output.item.qa_type, reference, output.response or ""))
            continue
        inputs.setdefault(metric_type, []).append(records[output.item_id] if records else output.item.raw)
        responses.setdefault(metric_type, []).append(output.raw if output.raw is not None else output.response)
        keys.setdefault(metric_type, []).append((output.item_id, output.pk))
    return inputs, responses, keys, others


def scoring_run_execute(*, run: ScoringRun, progress: Progress | None = None) -> ScoringRun:
    """Score the run's submission and store per-answer scores and the summary (safe to run twice)."""

    inputs, responses, keys, others = scoring_inputs(run)
    if not inputs and not others:
        raise DomainError(f"{run.system} has no outputs for items in this scope; import outputs first")
    scores: list[AnswerScore] = []
    summary: dict[str, Any] = {}
    record: dict[str, Any] = {"notes": []}
    n_items = 0
    if inputs:
        encoder = settings_encoder()
        before = (encoder.stats.texts_encoded, encoder.stats.texts_from_store)
        slices = list(run.slices.all())
        if slices:  # scored by the slice tasks, whose open-ended scores are stored: combine them
            if any(part.records is None for part in slices):
                raise ValueError(f"run {run.pk}: a slice is not scored yet")
            if progress:
                progress.start(len(slices), "scoring: combining the slices")
            result = combine_slices(
                inputs,
                responses,
                ScoringState.from_json(run.scoring_state),
                [record for part in slices for record in part.records or []],  # none is None: checked above
                profile=run.profile,
                encoder=encoder,
                text_metrics=settings_text_metrics(),
            )
            rows = result.item_rows()
            scores += answer_scores(run, keys, [row for row in rows if row["qa_type"] not in OPEN_TYPES])
            n_items += len(rows)
            if progress:
                progress.advance(len(slices), "scoring: slices combined")
        else:
            result = score_submission(
                inputs,
                responses,
                profile=run.profile,
                seed=run.seed,
                encoder=encoder,
                text_metrics=settings_text_metrics(),
                stopwords_version=settings.METRIC_STOPWORDS_VERSION,
                progress=_progress_bridge(progress),
            )
            scores += answer_scores(run, keys, result.item_rows())
            n_items += len(scores)
        summary, record = result.summary, {**result.run, "notes": result.notes}
        record["sentence_embeddings"] = {
            "encoded_by_this_task": encoder.stats.texts_encoded - before[0],
            "read_from_store": encoder.stats.texts_from_store - before[1],
            "chunk_tasks": run.chunks.count(),
        }
        if slices:
            record["slice_tasks"] = len(slices)
    if others:
        free = score_free_text([(ref, resp) for *_, ref, resp in others], text_metrics=settings_text_metrics())
        for (item_id, output_id, qa_type, _, _), row in zip(others, free.rows, strict=True):
            values = {name: row[name] for name in ("bleu", "rouge", "meteor")}
            scores.append(
                AnswerScore(
                    run=run, item_id=item_id, output_id=output_id, qa_type=qa_type, index=row["index"], **values
                )
            )
        n_items += len(others)
        summary = {**summary, **{f"other_benchmarks_{k}": v for k, v in free.summary.items() if k != "notes"}}
        record["notes"] = record["notes"] + free.summary["notes"]
    with transaction.atomic():
        answer_scores_store(scores)
        run.summary = summary
        run.run_record = record
        run.n_items = n_items
        run.finished_at = timezone.now()
        run.save(update_fields=["summary", "run_record", "n_items", "finished_at"])
    return run


PORTAL_TYPE = {metric: portal for portal, metric in METRIC_TYPE.items()}


def answer_scores(
    run: ScoringRun, keys: dict[str, list[tuple[int, int]]], rows: list[dict[str, Any]]
) -> list[AnswerScore]:
    """The metric's item rows (:func:`metrics.summary.item_row`) as the run's answer scores."""
    scores = []
    for row in rows:
        item_id, output_id = keys[row["qa_type"]][row["index"]]
        values = {name: row.get(name) for name in SCORE_FIELDS}
        scores.append(
            AnswerScore(
                run=run,
                item_id=item_id,
                output_id=output_id,
                qa_type=PORTAL_TYPE[row["qa_type"]],
                index=row["index"],
                **values,
            )  # fmt: skip
        )
    return scores


def answer_scores_store(scores: list[AnswerScore]) -> None:
    """Write the scores, overwriting a run's earlier row for the same item (a redelivered task)."""
    AnswerScore.objects.bulk_create(
        scores,
        batch_size=2000,
        update_conflicts=True,
        unique_fields=["run", "item"],
        update_fields=["output", "qa_type", "index", *SCORE_FIELDS],
    )


def scoring_run_split(*, run: ScoringRun, chunk_texts: int | None = None) -> list[ScoringChunk]:
    """The run's chunks still to encode, created on the first call; empty when the run is scored in one task.

    A run is split when the embedding store is on and more than ``chunk_texts`` (default
    ``METRIC_CHUNK_TEXTS``) of the texts it embeds are not stored yet. Calling it again (a redelivered task)
    creates nothing new and returns the chunks not done.
    """
    if run.chunks.exists():
        return list(run.chunks.filter(done_at__isnull=True))
    size = settings.METRIC_CHUNK_TEXTS if chunk_texts is None else chunk_texts
    if size <= 0 or not settings.METRIC_EMBEDDING_STORE:
        return []

    inputs, responses, _, _ = scoring_inputs(run)
    texts = embedding_texts(
        inputs, responses, profile=run.profile, seed=run.seed, stopwords_version=settings.METRIC_STOPWORDS_VERSION
    )
    missing = DatabaseTextStore().missing(settings_encoder().embedding_key, texts)
    if len(missing) <= size:
        return []
    chunks = [
        ScoringChunk(run=run, index=i, texts=missing[start : start + size])
        for i, start in enumerate(range(0, len(missing), size))
    ]
    ScoringChunk.objects.bulk_create(chunks, ignore_conflicts=True)  # a concurrent redelivery made the same ones
    return list(run.chunks.filter(done_at__isnull=True))


def scoring_chunk_encode(*, chunk: ScoringChunk) -> bool:
    """Encode the chunk's texts into the embedding store and mark it done; True when no chunk of its run is
    left (the caller then queues the final task; a redelivered last chunk says True again, which is harmless)."""

    ScoringChunk.objects.filter(pk=chunk.pk).update(attempts=F("attempts") + 1)
    encoder = settings_encoder()
    # One write of every vector: texts this worker already had in memory are stored too.
    vectors = encoder.embed_texts(chunk.texts, write_store=False)
    DatabaseTextStore().put_many(encoder.embedding_key, dict(zip(chunk.texts, vectors, strict=True)))
    return run_part_done(
        parts=ScoringChunk.objects.filter(run_id=chunk.run_id),
        part_pk=chunk.pk,
        units=len(chunk.texts),
        what="encoding texts",
        noun="chunks",
    )


def run_part_done(*, parts: QuerySet, part_pk: int, units: int, what: str, noun: str, **fields: Any) -> bool:
    """Mark one part of a run split across tasks done (writing ``fields`` with it) and count its ``units`` on
    the job once; True when no part of the run is left (the caller then queues the run's next task; a
    redelivered last part says True again, which is harmless: that task is idempotent)."""
    run_id = parts.values_list("run_id", flat=True).get(pk=part_pk)
    with transaction.atomic():
        run = ScoringRun.objects.select_for_update().get(pk=run_id)  # serialises the parts' endings
        first_time = parts.filter(pk=part_pk, done_at__isnull=True).update(done_at=timezone.now(), **fields)
        counts = parts.aggregate(total=Count("pk"), left=Count("pk", filter=Q(done_at__isnull=True)))
        total, left = counts["total"], counts["left"]
        if first_time and run.job_id:
            job_part_progress(run.job_id, done=units, message=f"{what}: {total - left} of {total} {noun} done")
    return left == 0


def _progress_bridge(progress: Progress | None) -> Callable[[str, int, int], None] | None:
    """Adapt the metric's ``progress(stage, done, total)`` callback to a job's progress bar."""
    if progress is None:
        return None
    state: dict[str, Any] = {"stage": None, "done": 0}

    def report(stage: str, done: int, total: int) -> None:
        if stage != state["stage"]:
            state.update(stage=stage, done=0)
            progress.start(total, f"scoring: {stage}")
        progress.advance(done - state["done"], f"scoring: {stage}")
        state["done"] = done

    return report
