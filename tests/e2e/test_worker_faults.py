"""A Celery worker SIGKILLed in the middle of a scoring job: after a restart the job completes, every score is
stored exactly once, and the progress record tells the truth (a second attempt, finished)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analytics.models import AnswerScore, ScoringChunk, ScoringRun, TextEmbedding
from analytics.tasks import scoring_task
from annotation.models import QAItem
from annotation.services.imports import items_import
from portal.jobs import job_create
from ranking.models import System
from ranking.services.outputs import outputs_import

from .conftest import wait_until

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _dataset(tmp_path: Path, n_items: int) -> Path:
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_import import make_dataset

    folder = tmp_path / "items"
    folder.mkdir()
    make_dataset(folder, n_items)
    return folder


def _responses(tmp_path: Path) -> Path:
    """A plausible answer for every item: the gold text for open types, the right option for closed ones."""
    lines = []
    for item in QAItem.objects.all():
        response = {
            "multiple_choice": item.correct_answer,
            "list": ", ".join(item.answer_list),
            "short_inverse": item.incorrect_explanation,
        }.get(item.qa_type, item.answer)
        # Distinct per item (the generated items repeat a few texts), so there is real encoding to split.
        lines.append(json.dumps({"item_uid": item.uid, "system": "crashy", "response": f"{response} ({item.uid})"}))
    path = tmp_path / "outputs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _queue_scoring(organizer) -> tuple[ScoringRun, object]:
    run = ScoringRun.objects.create(system=System.objects.get(name="crashy"), created_by=organizer)
    job = job_create(kind="scoring", params={"run_id": run.pk}, user=organizer)
    run.job = job
    run.save()
    scoring_task.delay(str(job.pk))
    return run, job


def _wait(job, predicate, timeout: float, what: str, worker, interval: float = 0.2) -> None:
    def check():
        job.refresh_from_db()
        return predicate()

    try:
        wait_until(check, timeout, interval=interval, what=what)
    except AssertionError:
        raise AssertionError(
            f"{what}: job {job.status} {job.message!r} {job.progress_done}/{job.progress_total} attempts "
            f"{job.attempts}; log:\n{worker.log()[-3000:]}"
        ) from None


def _all_scored_once(run, job) -> None:
    assert job.status == "succeeded", job.error
    assert job.progress_done == job.progress_total
    assert AnswerScore.objects.filter(run=run).count() == QAItem.objects.count() == 700
    assert AnswerScore.objects.filter(run=run).values("item").distinct().count() == 700
    run.refresh_from_db()
    assert run.finished_at is not None and run.n_items == 700


def test_scoring_survives_a_sigkilled_worker_without_losing_or_duplicating_scores(
    worker_factory, organizer, tmp_path, monkeypatch
):
    """The run scored in one task (METRIC_CHUNK_TEXTS=0): the whole task is redelivered and done again."""
    monkeypatch.setenv("METRIC_CHUNK_TEXTS", "0")
    items_import(paths=[_dataset(tmp_path, 700)])
    outputs_import(system_name="crashy", paths=[_responses(tmp_path)])
    first = worker_factory()
    run, job = _queue_scoring(organizer)
    # The semantic stage has started (model loaded, pairs being encoded): nothing is stored yet.
    _wait(job, lambda: job.status == "running" and job.message == "scoring: semantic", 180, "scoring to start",
          first, interval=0.1)  # fmt: skip
    first.kill()
    job.refresh_from_db()
    assert job.status == "running" and job.attempts == 1  # what a crash leaves behind
    assert AnswerScore.objects.filter(run=run).count() == 0  # scores are written once, at the end

    # The restarted worker finds the unacknowledged task (late ack + visibility timeout) and runs it again.
    monkeypatch.setenv("CELERY_VISIBILITY_TIMEOUT", "3")
    second = worker_factory()
    _wait(job, lambda: job.finished, 240, "the redelivered job", second)
    _all_scored_once(run, job)
    assert job.attempts == 2
    assert not ScoringChunk.objects.filter(run=run).exists()


def test_a_split_scoring_run_survives_a_worker_killed_in_a_chunk(worker_factory, organizer, tmp_path, monkeypatch):
    """The run split into chunk tasks (METRIC_CHUNK_TEXTS=100): the chunk being encoded when the worker dies is
    redelivered, the last chunk queues the final task once, and every score is stored once."""
    monkeypatch.setenv("METRIC_CHUNK_TEXTS", "100")
    items_import(paths=[_dataset(tmp_path, 700)])
    outputs_import(system_name="crashy", paths=[_responses(tmp_path)])
    first = worker_factory()
    run, job = _queue_scoring(organizer)
    in_flight = ScoringChunk.objects.filter(run=run, attempts=1, done_at__isnull=True)
    _wait(job, in_flight.exists, 180, "a chunk to be encoded", first, interval=0.1)
    killed = in_flight.first()
    first.kill()
    job.refresh_from_db()
    assert job.status == "running" and job.message.startswith("encoding texts")
    assert AnswerScore.objects.filter(run=run).count() == 0

    monkeypatch.setenv("CELERY_VISIBILITY_TIMEOUT", "3")
    second = worker_factory()
    _wait(job, lambda: job.finished, 240, "the split job", second)
    _all_scored_once(run, job)
    assert job.attempts == 1  # the run's first task finished; only the chunk was done again
    chunks = list(ScoringChunk.objects.filter(run=run))
    assert len(chunks) >= 3 and all(c.done_at for c in chunks)
    assert ScoringChunk.objects.get(pk=killed.pk).attempts == 2
    # The final task found every text encoded (in the store, or in its worker's memory from the chunks it ran).
    record = run.run_record["sentence_embeddings"]
    assert record["encoded_by_this_task"] == 0 and record["chunk_tasks"] == len(chunks)
    assert TextEmbedding.objects.count() == sum(len(c.texts) for c in chunks)
