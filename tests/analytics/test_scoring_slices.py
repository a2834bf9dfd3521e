"""A very large run scored in slices by several workers: a first task computes what the submission shares, slice
tasks score the answers, the last one queues the task that combines the summary — the same numbers as one task.

(The same path through a real Redis and two worker processes is in ``tests/e2e/test_scoring_slices_e2e.py``.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from analytics.embeddings import settings_encoder
from analytics.models import AnswerScore, ScoringRun, ScoringSlice
from analytics.scoring.slices import scoring_run_slice, scoring_slice_score
from analytics.services.requests import scoring_request
from analytics.tasks import scoring_finish_task, scoring_slice_task, scoring_task
from annotation.services.imports import items_import
from portal.jobs import job_create
from portal.models import Job
from ranking.models import System
from ranking.services.outputs import outputs_import

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "fixtures" / "metric-reference"
FIELDS = ("qa_type", "index", "semantic", "word", "sentence", "paragraph", "bleu", "rouge", "meteor", "correct",
          "precision", "recall", "f1", "predicted_step", "step_distance")  # fmt: skip

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def system(organizer):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    outputs_import(system_name="open_c_wrong", paths=[REFERENCE / "open_c_wrong"])
    settings_encoder().clear_caches()
    return System.objects.get(name="open_c_wrong")


def _scores(run) -> dict[int, tuple]:
    return {row[0]: row[1:] for row in AnswerScore.objects.filter(run=run).values_list("item_id", *FIELDS)}


def _new_run(system, organizer) -> ScoringRun:
    run = ScoringRun.objects.create(system=system, created_by=organizer)
    run.job = job_create(kind="scoring", params={"run_id": run.pk}, user=organizer)
    run.save()
    return run


def test_a_run_scored_in_slices_stores_what_one_task_stores(system, organizer, settings):
    settings.METRIC_SLICE_ITEMS = 4
    split = scoring_request(system=system, user=organizer)  # eager here: every slice task runs in this process
    split.refresh_from_db()
    job = Job.objects.get(pk=split.job_id)
    assert job.status == "succeeded", job.error
    assert job.attempts == 1 and job.progress_done == job.progress_total > 0
    parts = list(split.slices.all())
    assert len(parts) >= 3 and all(p.done_at and p.attempts == 1 and p.stop - p.start <= 4 for p in parts)
    assert [p.start for p in parts[1:]] == [p.stop for p in parts[:-1]]  # contiguous, none left out
    assert split.scoring_state["n_open"] == parts[-1].stop and split.scoring_state["idf_answers"] > 0
    assert split.run_record["slice_tasks"] == len(parts)

    settings.METRIC_SLICE_ITEMS = 0
    whole = scoring_request(system=system, user=organizer)
    whole.refresh_from_db()
    assert not whole.slices.exists() and "slice_tasks" not in whole.run_record
    assert split.n_items == whole.n_items == 35
    assert _scores(split) == _scores(whole)  # exactly, every field of every answer
    assert split.summary == whole.summary
    assert split.run_record["notes"] == whole.run_record["notes"]
    assert split.run_record["baseline"] == whole.run_record["baseline"]


def test_small_runs_are_not_sliced(system, organizer, settings):
    run = _new_run(system, organizer)
    assert scoring_run_slice(run=run, slice_items=1000) == []
    assert scoring_run_slice(run=run, slice_items=0) == []
    assert not ScoringSlice.objects.exists()
    run.refresh_from_db()
    assert run.scoring_state == {}


def test_redelivered_slices_count_once_and_the_last_one_queues_the_final_task(system, organizer):
    run = _new_run(system, organizer)
    parts = scoring_run_slice(run=run, slice_items=5)
    state = ScoringRun.objects.get(pk=run.pk).scoring_state
    assert [p.pk for p in scoring_run_slice(run=run, slice_items=5)] == [p.pk for p in parts]  # no new rows
    assert ScoringRun.objects.get(pk=run.pk).scoring_state == state

    first, *rest = parts
    assert scoring_slice_score(part=first) is False
    stored = _scores(run)
    assert len(stored) == first.stop - first.start  # its answers are stored at once
    assert scoring_slice_score(part=first) is False  # redelivered: scored again, counted once, same rows
    assert _scores(run) == stored
    first.refresh_from_db()
    job = Job.objects.get(pk=run.job_id)
    assert first.attempts == 2 and job.progress_done == first.stop - first.start
    assert [scoring_slice_score(part=p) for p in rest] == [False] * (len(rest) - 1) + [True]
    job.refresh_from_db()
    assert job.progress_done == parts[-1].stop
    assert job.message == f"scoring answers: {len(parts)} of {len(parts)} slices done"

    scoring_finish_task(str(job.pk))
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert AnswerScore.objects.filter(run=run).count() == 35
    scoring_slice_task(str(job.pk), first.pk)  # after the end: nothing is done
    first.refresh_from_db()
    assert first.attempts == 2


def test_a_run_whose_final_task_was_lost_is_combined_when_its_first_task_runs_again(system, organizer):
    """Job recovery queues the run's first task again: with every slice scored, it combines them at once."""
    run = _new_run(system, organizer)
    parts = scoring_run_slice(run=run, slice_items=5)
    for part in parts:
        scoring_slice_score(part=part)
    scoring_task(str(run.job_id))  # as jobs_recover would queue it
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "succeeded", job.error
    assert AnswerScore.objects.filter(run=run).count() == 35
    assert sorted(ScoringSlice.objects.filter(run=run).values_list("attempts", flat=True)) == [1] * len(parts)


def test_a_failing_slice_fails_the_job_with_the_reason(system, organizer, settings, monkeypatch):
    settings.METRIC_SLICE_ITEMS = 4

    def broken(*args, **kwargs):
        raise RuntimeError("scorer out of memory")

    monkeypatch.setattr("analytics.scoring.slices.score_slice", broken)
    run = scoring_request(system=system, user=organizer)
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "failed" and "RuntimeError: scorer out of memory" in job.error
    run.refresh_from_db()
    assert run.summary == {} and run.finished_at is None
