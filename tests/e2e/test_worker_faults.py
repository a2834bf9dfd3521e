"""A Celery worker SIGKILLed in the middle of a scoring job: after a restart the job completes, every score is
stored exactly once, and the progress record tells the truth (a second attempt, finished)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analytics.models import AnswerScore, ScoringRun
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
        lines.append(json.dumps({"item_uid": item.uid, "system": "crashy", "response": f"{response} (model)"}))
    path = tmp_path / "outputs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_scoring_survives_a_sigkilled_worker_without_losing_or_duplicating_scores(
    worker_factory, organizer, tmp_path, monkeypatch
):
    items_import(paths=[_dataset(tmp_path, 700)])
    outputs_import(system_name="crashy", paths=[_responses(tmp_path)])
    run = ScoringRun.objects.create(system=System.objects.get(name="crashy"), created_by=organizer)
    job = job_create(kind="scoring", params={"run_id": run.pk}, user=organizer)
    run.job = job
    run.save()

    first = worker_factory()
    scoring_task.delay(str(job.pk))

    def scoring_under_way():
        job.refresh_from_db()
        # The semantic stage has started (model loaded, pairs being encoded): nothing is stored yet.
        return job.status == "running" and job.message == "scoring: semantic"

    try:
        wait_until(scoring_under_way, 180, interval=0.1, what="scoring to start")
    except AssertionError:
        raise AssertionError(
            f"job {job.status} {job.message!r} {job.progress_done}/{job.progress_total}; log:\n{first.log()[-3000:]}"
        ) from None
    first.kill()
    job.refresh_from_db()
    assert job.status == "running" and job.attempts == 1  # what a crash leaves behind
    assert AnswerScore.objects.filter(run=run).count() == 0  # scores are written once, at the end

    # The restarted worker finds the unacknowledged task (late ack + visibility timeout) and runs it again.
    monkeypatch.setenv("CELERY_VISIBILITY_TIMEOUT", "3")
    second = worker_factory()

    def finished():
        job.refresh_from_db()
        return job.finished

    try:
        wait_until(finished, 240, what="the redelivered job")
    except AssertionError:
        raise AssertionError(f"job {job.status} attempts {job.attempts}; log:\n{second.log()[-3000:]}") from None
    assert job.status == "succeeded", job.error
    assert job.attempts == 2
    assert job.progress_done == job.progress_total
    assert AnswerScore.objects.filter(run=run).count() == QAItem.objects.count() == 700
    assert AnswerScore.objects.filter(run=run).values("item").distinct().count() == 700
    run.refresh_from_db()
    assert run.finished_at is not None and run.n_items == 700
