"""Celery tasks of the portal itself (jobs of every app)."""

from celery import shared_task


@shared_task
def jobs_recover_task() -> dict:
    """Periodic: queue again the jobs whose task the broker lost; fail those whose worker keeps dying."""
    from portal.jobs import jobs_recover

    return jobs_recover().as_dict()
