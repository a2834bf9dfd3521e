"""A finished study report stored as the report task stores one, for tests of the report pages."""

from __future__ import annotations

from django.utils import timezone

from analytics.models import Report
from analytics.services.reports import report_study


def stored_study_report(study, *, created_by=None, **options) -> Report:
    """The study report of ``study`` computed now (``options``: ``n_resamples``, ``seed``) and stored finished."""
    return Report.objects.create(
        kind="study",
        params={"study_id": study.pk},
        result=report_study(study_id=study.pk, **options),
        created_by=created_by,
        finished_at=timezone.now(),
    )
