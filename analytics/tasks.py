"""Celery tasks of the analytics app: ids in, one service call, progress on the job record."""

import functools

from celery import shared_task
from django.db import transaction

from portal.jobs import CONTINUES, job_part, job_run


@shared_task(acks_late=True)
def report_task(job_id: str) -> None:
    from analytics.models import Report
    from analytics.reports import report_run

    def work(job, progress):
        report = Report.objects.get(pk=job.params["report_id"])
        report_run(report=report, progress=progress)
        return {"report_id": report.pk}

    job_run(job_id, work)


@shared_task(acks_late=True)
def scoring_task(job_id: str) -> None:
    """Score a run in this task, or split its encoding into chunk tasks (``analytics.scoring``)."""
    from analytics.models import ScoringRun
    from analytics.scoring import scoring_run_split

    def work(job, progress):
        run = ScoringRun.objects.get(pk=job.params["run_id"])
        chunks = scoring_run_split(run=run)
        if not chunks:
            return _score(run, progress)
        progress.start(sum(len(c.texts) for c in chunks), f"encoding texts: {len(chunks)} chunks queued")
        for chunk in chunks:
            transaction.on_commit(functools.partial(scoring_chunk_task.delay, job_id, chunk.pk))
        return CONTINUES

    job_run(job_id, work)


@shared_task(acks_late=True)
def scoring_chunk_task(job_id: str, chunk_id: int) -> None:
    from analytics.models import ScoringChunk
    from analytics.scoring import scoring_chunk_encode

    def work(job):
        if scoring_chunk_encode(chunk=ScoringChunk.objects.get(pk=chunk_id)):
            transaction.on_commit(functools.partial(scoring_finish_task.delay, job_id))

    job_part(job_id, work)


@shared_task(acks_late=True)
def scoring_finish_task(job_id: str) -> None:
    """The last step of a split run: every text is in the store, the scoring itself encodes nothing."""
    from analytics.models import ScoringRun

    job_run(job_id, lambda job, progress: _score(ScoringRun.objects.get(pk=job.params["run_id"]), progress),
            resume=True)  # fmt: skip


def _score(run, progress) -> dict:
    from analytics.scoring import scoring_run_execute

    scoring_run_execute(run=run, progress=progress)
    return {"run_id": run.pk, "n_items": run.n_items, "overall_effectiveness": run.summary.get("overall_effectiveness")}


@shared_task
def embeddings_prune_task() -> int:
    """Periodic: stored sentence embeddings older than ``METRIC_EMBEDDING_RETENTION_DAYS`` go."""
    from django.conf import settings

    from analytics.embeddings import embeddings_prune

    return embeddings_prune(older_than_days=settings.METRIC_EMBEDDING_RETENTION_DAYS)
