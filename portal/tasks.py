"""Celery tasks of the portal itself (jobs of every app)."""

from celery import shared_task
from django.conf import settings

from portal.audit_trail import audit_prune
from portal.jobs import jobs_recover
from portal.uploads import uploads_prune


@shared_task
def jobs_recover_task() -> dict:
    """Periodic: queue again the jobs whose task the broker lost; fail those whose worker keeps dying."""
    return jobs_recover().as_dict()


@shared_task
def uploads_prune_task() -> dict:
    """Periodic: delete the uploaded files of jobs that ended more than PORTAL_UPLOAD_RETENTION_DAYS ago."""
    return uploads_prune(older_than_days=settings.PORTAL_UPLOAD_RETENTION_DAYS).as_dict()


@shared_task
def audit_prune_task() -> dict:
    """Periodic: delete the audit entries older than AUDIT_RETENTION_DAYS (the only deletion the database allows)."""
    return {"deleted": audit_prune(older_than_days=settings.AUDIT_RETENTION_DAYS)}
