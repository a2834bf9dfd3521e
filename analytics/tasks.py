"""Celery tasks of the analytics app: ids in, one service call, progress on the job record."""

from celery import shared_task

from portal.jobs import job_run


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
    from analytics.models import ScoringRun
    from analytics.scoring import scoring_run_execute

    def work(job, progress):
        run = ScoringRun.objects.get(pk=job.params["run_id"])
        scoring_run_execute(run=run, progress=progress)
        return {
            "run_id": run.pk,
            "n_items": run.n_items,
            "overall_effectiveness": run.summary.get("overall_effectiveness"),
        }

    job_run(job_id, work)
