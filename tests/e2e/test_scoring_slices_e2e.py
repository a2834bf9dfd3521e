"""Two real Celery workers score one run in slices (a first task for the shared state, slice tasks, the final
task) through a real Redis: every slice done once, and the stored scores and summary equal those of the run in
one process."""

from __future__ import annotations

from pathlib import Path

import pytest

from analytics.models import AnswerScore, ScoringRun
from analytics.scoring.runs import scoring_run_execute
from analytics.tasks import scoring_task
from annotation.services.imports import items_import
from portal.jobs import job_create
from portal.models import Job
from ranking.models import System
from ranking.services.outputs import outputs_import

from .conftest import wait_until

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "fixtures" / "metric-reference"
FIELDS = ("semantic", "word", "sentence", "paragraph", "bleu", "rouge", "meteor", "correct", "f1", "step_distance")

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _scores(run) -> dict:
    return {r[0]: r[1:] for r in AnswerScore.objects.filter(run=run).values_list("item_id", *FIELDS)}


def test_two_workers_score_a_run_in_slices_as_one_process_does(worker_factory, organizer, monkeypatch, settings):
    monkeypatch.setenv("METRIC_SLICE_ITEMS", "4")  # the workers' setting: ~20 open-ended answers → 5 slices
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    outputs_import(system_name="open_c_wrong", paths=[REFERENCE / "open_c_wrong"])
    system = System.objects.get(name="open_c_wrong")
    workers = [worker_factory(), worker_factory()]

    split = ScoringRun.objects.create(system=system, created_by=organizer)
    split.job = job_create(kind="scoring", params={"run_id": split.pk}, user=organizer)
    split.save()
    scoring_task.delay(str(split.job_id))
    job = wait_until(
        lambda: Job.objects.filter(pk=split.job_id, status__in=["succeeded", "failed"]).first(), 120, what="the job"
    )
    assert job.status == "succeeded", (job.error, workers[0].log()[-2000:])
    split.refresh_from_db()
    parts = list(split.slices.all())
    assert len(parts) >= 3 and all(p.done_at and p.attempts == 1 for p in parts)
    ran = workers[0].log().count("scoring_slice_task[")  # one log per worker file: both write to the same one
    assert ran >= 2 * len(parts)  # received and succeeded, each slice once

    whole = ScoringRun.objects.create(system=system, created_by=organizer)
    scoring_run_execute(run=whole)  # in this process, in one piece
    got, want = _scores(split), _scores(whole)
    assert got.keys() == want.keys() and len(got) == 35
    for key, row in want.items():
        for name, a, b in zip(FIELDS, got[key], row, strict=True):
            assert a == pytest.approx(b, abs=1e-6) if isinstance(b, float) else a == b, (key, name)
    assert split.summary.keys() == whole.summary.keys()
    assert split.summary["overall_effectiveness"] == pytest.approx(whole.summary["overall_effectiveness"], abs=1e-6)
