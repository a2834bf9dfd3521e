"""Scoring split across workers: the embedding store in PostgreSQL, chunk tasks, the final task.

(The same path through a real Redis and real worker processes, with a worker killed in a chunk, is in
``tests/e2e/test_worker_faults.py``.)
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from django.utils import timezone

from analytics.embeddings import DatabaseTextStore, embeddings_prune, settings_encoder, text_sha256
from analytics.models import AnswerScore, ScoringChunk, ScoringRun, TextEmbedding
from analytics.scoring.runs import scoring_chunk_encode, scoring_run_split
from analytics.services.requests import scoring_request
from analytics.tasks import scoring_chunk_task, scoring_finish_task, scoring_task
from annotation.services.imports import items_import
from portal.jobs import job_create
from portal.models import Job
from ranking.models import System
from ranking.services.outputs import outputs_import

from .test_scoring_in_portal import _expected

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "fixtures" / "metric-reference"

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _vector(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(384).astype(np.float32)


def test_store_keeps_vectors_byte_for_byte_per_model():
    store = DatabaseTextStore()
    store.put_many("model-a:256", {"aspirin": _vector(1), "": _vector(2)})
    store.put_many("model-a:256", {"aspirin": _vector(3)})  # already stored: the first vector stays
    got = store.get_many("model-a:256", ["aspirin", "", "unknown", "aspirin"])
    assert set(got) == {"aspirin", ""}
    assert got["aspirin"].tobytes() == _vector(1).tobytes() and got[""].tobytes() == _vector(2).tobytes()
    assert store.get_many("model-b:256", ["aspirin"]) == {}
    assert store.missing("model-a:256", ["x", "aspirin", "x", "y"]) == ["x", "y"]


def test_a_stored_row_of_the_wrong_size_is_treated_as_missing():
    TextEmbedding.objects.create(model_key="m", text_sha256=text_sha256("cut"), vector=b"\0" * 100)
    assert DatabaseTextStore().get_many("m", ["cut"]) == {}


def test_prune_deletes_only_old_rows():
    DatabaseTextStore().put_many("m", {"old": _vector(1), "new": _vector(2)})
    TextEmbedding.objects.filter(text_sha256=text_sha256("old")).update(created_at=timezone.now() - timedelta(days=91))
    assert embeddings_prune(older_than_days=90) == 1
    assert set(DatabaseTextStore().get_many("m", ["old", "new"])) == {"new"}


@pytest.fixture
def system(organizer):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    outputs_import(system_name="open_c_wrong", paths=[REFERENCE / "open_c_wrong"])
    settings_encoder().clear_caches()  # as a fresh worker: nothing in memory
    return System.objects.get(name="open_c_wrong")


def _semantic(run) -> dict[int, float]:
    return dict(AnswerScore.objects.filter(run=run, semantic__isnull=False).values_list("item_id", "semantic"))


def test_a_split_run_scores_as_the_public_scorer_and_a_later_run_reads_the_store(system, organizer, settings):
    settings.METRIC_CHUNK_TEXTS = 10
    run = scoring_request(system=system, user=organizer)  # eager here: every chunk task runs in this process
    run.refresh_from_db()
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "succeeded", job.error
    assert job.attempts == 1 and job.progress_done == job.progress_total > 0
    chunks = list(run.chunks.all())
    assert len(chunks) >= 3 and all(c.done_at and c.attempts == 1 and len(c.texts) <= 10 for c in chunks)
    assert run.run_record["sentence_embeddings"]["encoded_by_this_task"] == 0
    assert run.run_record["sentence_embeddings"]["chunk_tasks"] == len(chunks)
    n_texts = sum(len(c.texts) for c in chunks)
    assert TextEmbedding.objects.count() == n_texts
    expected = _expected("open_c_wrong")
    for score in AnswerScore.objects.filter(run=run, semantic__isnull=False):
        want = expected.get(({"short_answer": "short"}.get(score.qa_type, score.qa_type), score.index))
        if want:
            assert score.semantic == pytest.approx(want["semantic"], abs=1e-4)

    # A later run on a fresh worker (memory cleared) encodes nothing: every text is in the store.
    settings_encoder().clear_caches()
    settings.METRIC_CHUNK_TEXTS = 0
    again = scoring_request(system=system, user=organizer)
    again.refresh_from_db()
    assert again.run_record["sentence_embeddings"] == {
        "encoded_by_this_task": 0,
        "read_from_store": n_texts,
        "chunk_tasks": 0,
    }
    first, second = _semantic(run), _semantic(again)
    assert first.keys() == second.keys() and all(first[k] == second[k] for k in first)


def test_small_runs_and_a_store_turned_off_are_scored_in_one_task(system, organizer, settings):
    run = ScoringRun.objects.create(system=system, created_by=organizer)
    settings.METRIC_CHUNK_TEXTS = 400  # more than this run's texts
    assert scoring_run_split(run=run) == []
    settings.METRIC_CHUNK_TEXTS, settings.METRIC_EMBEDDING_STORE = 10, False
    assert scoring_run_split(run=run) == []
    assert not ScoringChunk.objects.exists()


def test_redelivered_chunks_count_once_and_the_last_one_queues_the_final_task(system, organizer, settings):
    run = ScoringRun.objects.create(system=system, created_by=organizer)
    run.job = job_create(kind="scoring", params={"run_id": run.pk}, user=organizer)
    run.save()
    chunks = scoring_run_split(run=run, chunk_texts=10)
    assert [c.pk for c in scoring_run_split(run=run, chunk_texts=10)] == [c.pk for c in chunks]  # no new rows

    first, *rest = chunks
    assert scoring_chunk_encode(chunk=first) is False
    assert scoring_chunk_encode(chunk=first) is False  # redelivered: encoded again, counted once
    first.refresh_from_db()
    job = Job.objects.get(pk=run.job_id)
    assert first.attempts == 2 and job.progress_done == len(first.texts)
    assert [scoring_chunk_encode(chunk=c) for c in rest] == [False] * (len(rest) - 1) + [True]
    job.refresh_from_db()
    assert job.progress_done == sum(len(c.texts) for c in chunks)
    assert job.message == f"encoding texts: {len(chunks)} of {len(chunks)} chunks done"

    scoring_finish_task(str(job.pk))
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert AnswerScore.objects.filter(run=run).count() == 35
    scoring_chunk_task(str(job.pk), first.pk)  # after the end: nothing is done
    first.refresh_from_db()
    assert first.attempts == 2


def test_a_failing_chunk_fails_the_job_with_the_reason_and_stores_no_scores(system, organizer, settings, monkeypatch):
    settings.METRIC_CHUNK_TEXTS = 10

    def broken(texts, **options):
        raise RuntimeError("encoder out of memory")

    monkeypatch.setattr(settings_encoder(), "embed_texts", broken)
    run = scoring_request(system=system, user=organizer)
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "failed" and "RuntimeError: encoder out of memory" in job.error
    assert run.chunks.filter(done_at__isnull=True).exists()
    assert not AnswerScore.objects.filter(run=run).exists()


def test_a_split_run_whose_chunk_messages_were_lost_is_finished_by_job_recovery(system, organizer, settings):
    """The broker lost the chunk messages after one chunk was done: recovery runs the run's first task again,
    which queues only the chunks not done; the job ends with every score, no chunk encoded twice."""
    from portal.jobs import jobs_recover

    settings.JOB_STALE_SECONDS = 600
    run = ScoringRun.objects.create(system=system, created_by=organizer)
    run.job = job_create(kind="scoring", params={"run_id": run.pk}, user=organizer)
    run.save()
    chunks = scoring_run_split(run=run, chunk_texts=10)
    scoring_chunk_encode(chunk=chunks[0])
    long_ago = timezone.now() - timedelta(minutes=11)
    Job.objects.filter(pk=run.job_id).update(
        status="running", attempts=1, task_name=scoring_task.name, heartbeat_at=long_ago
    )
    settings.METRIC_CHUNK_TEXTS = 10
    assert jobs_recover().requeued == [str(run.job_id)]  # runs here, in-process
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "succeeded", job.error
    assert job.attempts == 2
    assert sorted(run.chunks.values_list("attempts", flat=True)) == [1] * len(chunks)
    assert not run.chunks.filter(done_at__isnull=True).exists()
    assert AnswerScore.objects.filter(run=run).count() == 35
