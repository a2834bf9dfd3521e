"""Celery tasks of the ranking app: ids in, one service call, progress on the job record."""

from pathlib import Path

from django.urls import reverse

from annotation.services.imports import by_type_phrase
from portal.job_kinds import count_phrase, job_task, words_list
from portal.jobs import job_run
from ranking.services.outputs import outputs_import


def _imported_outputs_sentences(result: dict, params: dict) -> list[str]:
    system = result["system"]
    created, updated, unchanged = int(result["created"]), int(result["updated"]), int(result["unchanged"])
    read = created + updated + unchanged
    if not read:
        return [f"The files held no answers of “{system}”."]
    if not created and not updated:
        everything = "its one answer was" if read == 1 else f"all {read:,} of its answers were"
        return [f"Nothing new for “{system}”: {everything} already here, word for word."]
    kinds = by_type_phrase(result.get("by_type") or {})
    sentences = [f"{count_phrase(read, 'answer', 'answers')} of “{system}” read{f' ({kinds})' if kinds else ''}."]
    changes = [f"{created:,} new"] if created else []
    if updated:
        changes.append(f"{updated:,} replaced by a changed text")
    if unchanged:
        changes.append(f"{unchanged:,} already here, word for word")
    sentences.append(f"{words_list(changes)}.")
    return sentences


@job_task(
    kind="import_outputs",
    label="Import model outputs",
    links=lambda result, params: [("Preference studies (pick this system)", reverse("study_list"))],
    describe=_imported_outputs_sentences,
    progress_text=lambda message, done, total: f"{done:,} of {total:,} answers stored",
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
