"""Celery tasks of the ranking app: ids in, one service call, progress on the job record."""

from pathlib import Path

from django.urls import reverse

from portal.job_kinds import job_task
from portal.jobs import job_run
from ranking.services.outputs import outputs_import


@job_task(
    kind="import_outputs",
    label="Import model outputs",
    links=lambda result, params: [("Preference studies (pick this system)", reverse("study_list"))],
)
def import_outputs_task(job_id: str) -> None:
    """Job params: ``system``, ``paths``, optional ``family``, ``parameter_count``, ``displays``."""

    def work(job, progress):
        params = job.params
        result = outputs_import(
            system_name=params["system"],
            paths=[Path(p) for p in params["paths"]],
            family=params.get("family", ""),
            parameter_count=params.get("parameter_count"),
            displays={Path(p): name for p, name in params.get("displays", {}).items()},
            user=job.created_by,
            progress=progress,
        )
        return result.as_dict()

    job_run(job_id, work)
