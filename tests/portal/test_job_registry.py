"""The job registry: every kind is declared once, by its task (``portal.jobs.job_task``); services start jobs by
kind (``job_start``), and the task runs once the transaction commits, never before and never after a rollback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from celery import current_app
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from annotation.models import QAItem
from annotation.services.imports import import_request
from portal.errors import DomainError
from portal.job_kinds import job_kind, job_kind_label, job_kinds, job_task
from portal.jobs import job_create, job_outputs, job_start
from portal.models import Job

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "cliniqlink-sample"
PRODUCT_PACKAGES = ("portal", "annotation", "ranking", "analytics")


def _kinds_started_in_the_product() -> set[str]:
    """The kinds named in ``job_start(kind=...)`` calls of the product code (the part before a ':' detail), and in
    ``board_refresh(..., kind=...)`` (``analytics.boards``, which starts the job of a stored board)."""
    started = set()
    for package in PRODUCT_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for match in re.finditer(
                r"(?:job_start\(|board_refresh\([^)]*?)\s*kind=f?[\"']([a-z_]+)", path.read_text()
            ):
                started.add(match.group(1))
    return started


def test_every_kind_a_service_starts_has_a_task_and_a_label():
    started = _kinds_started_in_the_product()
    assert started == {
        "import_items",
        "import_sources",
        "import_outputs",
        "report",
        "scoring",
        "promptcblue_scoring",
        "reliability_fit",
        "nugget_matcher",
        "span_leaderboard",
        "nugget_leaderboard",
    }
    assert started == set(job_kinds())  # and no registered kind is left without a service starting it
    for kind in started:
        entry = job_kind(kind)
        assert entry.label and entry.label != kind
        assert current_app.tasks[entry.task.name] is not None  # a task Celery knows by its name


def test_the_web_process_has_every_kind_without_celery_autodiscovery():
    """Django's set-up alone (as runserver, gunicorn or manage.py have it) registers every kind: the apps'
    ``ready`` import their tasks modules."""
    code = (
        "import django; django.setup()\nfrom portal.job_kinds import job_kinds\nprint(','.join(sorted(job_kinds())))\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip().split(",") == sorted(_kinds_started_in_the_product())


@pytest.mark.django_db
def test_an_unknown_kind_is_refused_and_creates_nothing(organizer):
    with pytest.raises(DomainError, match="unknown job kind 'import_everything'"):
        job_start(kind="import_everything", params={}, user=organizer)
    with pytest.raises(DomainError, match="unknown job kind"):
        job_create(kind="nonsense:detail", params={}, user=organizer)
    assert not Job.objects.exists()


def test_a_kind_is_declared_once():
    with pytest.raises(ImproperlyConfigured, match="'import_items' is run by annotation.tasks.import_items_task"):

        @job_task(kind="import_items", label="Another import")
        def another_import_task(job_id: str) -> None:  # pragma: no cover - refused before it is registered
            pass

    with pytest.raises(ImproperlyConfigured, match="without ':'"):
        job_task(kind="report:agreement", label="Agreement")
    assert job_kinds()["import_items"] == "Import items"


def test_labels_come_from_the_registry():
    assert job_kind_label("scoring") == "Score a system"
    assert job_kind_label("report:team_agreement") == "Report (team agreement)"
    assert job_kind_label("import_retired") == "import_retired"  # a kind an older version had: shown as stored


@pytest.mark.django_db
def test_a_service_starts_a_job_by_kind_and_it_runs_on_commit_only(organizer, django_capture_on_commit_callbacks):
    paths = sorted(SAMPLE.glob("*.json"))
    with django_capture_on_commit_callbacks() as callbacks:
        job = import_request(kind="items", paths=paths, displays={}, user=organizer)
        job.refresh_from_db()
        assert job.kind == "import_items" and job.status == "queued" and QAItem.objects.count() == 0
    assert len(callbacks) == 1 and job.task_name == "annotation.tasks.import_items_task"
    callbacks[0]()  # the commit
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert QAItem.objects.count() == job.result["created"] > 0


@pytest.mark.django_db
def test_a_job_started_in_a_transaction_that_rolls_back_is_never_queued(organizer, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            job_start(kind="import_items", params={"paths": [str(SAMPLE)]}, user=organizer)
            raise RuntimeError("the service failed after starting the job")
    assert callbacks == [] and not Job.objects.exists()


@pytest.mark.django_db
def test_a_finished_job_links_to_what_its_kind_says_it_produced(organizer):
    def finished(kind: str, **fields) -> Job:
        job = job_create(kind=kind, params=fields.pop("params", {}), user=organizer)
        Job.objects.filter(pk=job.pk).update(status=fields.pop("status", "succeeded"), **fields)
        job.refresh_from_db()
        return job

    assert job_outputs(finished("import_items", result={"batch_id": 7})) == [
        ("The items of this import", "/items/?batch=7")
    ]
    assert job_outputs(finished("import_items", result={})) == []  # nothing imported, no batch
    assert job_outputs(finished("report:agreement", params={"report_id": 3}))[0][0] == "The report"
    assert job_outputs(finished("report:agreement", params={"report_id": "x"})) == []  # a parameter of another shape
    assert job_outputs(finished("scoring", status="failed")) == []
