"""Starting analytics work: reports and scoring runs are created here and computed by Celery jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from analytics.models import Report, ScoringRun
from analytics.services.reports import report_params_check
from metrics import PROFILES
from portal.actors import acting_user
from portal.errors import DomainError
from portal.jobs import job_start

if TYPE_CHECKING:
    from annotation.models import Release
    from portal.models import User
    from ranking.models import System


def report_request(*, kind: str, params: dict | None = None, user: User | None = None) -> Report:
    """Create a report record and queue the job that computes it."""
    if kind not in Report.Kind.values:
        raise DomainError(f"unknown report kind {kind!r}")

    params = report_params_check(kind=kind, params=params or {})

    with transaction.atomic():
        report = Report.objects.create(kind=kind, params=params or {}, created_by=acting_user(user))
        report.job = job_start(kind=f"report:{kind}", params={"report_id": report.pk}, user=user)
        report.save(update_fields=["job"])
    return report


def scoring_request(
    *,
    system: System,
    release: Release | None = None,
    profile: str = "cliniqlink-2025",
    seed: int = 0,
    user: User | None = None,
) -> ScoringRun:
    """Create a scoring run for one system (over a release, or every item it answered) and queue its job: the
    ClinIQLink metric with one of its profiles, or the official PromptCBLUE evaluation (``ScoringRun.PROMPTCBLUE``)."""

    if profile not in PROFILES and profile != ScoringRun.PROMPTCBLUE:
        choices = ", ".join([*PROFILES, ScoringRun.PROMPTCBLUE])
        raise DomainError(f"unknown metric profile {profile!r}; use one of {choices}")
    if system.is_reference:
        raise DomainError("the reference pseudo-system is not scored")
    with transaction.atomic():
        run = ScoringRun.objects.create(
            system=system, release=release, profile=profile, seed=seed, created_by=acting_user(user)
        )
        if profile == ScoringRun.PROMPTCBLUE:
            run.job = job_start(kind="promptcblue_scoring", params={"run_id": run.pk}, user=user)
        else:
            run.job = job_start(kind="scoring", params={"run_id": run.pk}, user=user)
        run.save(update_fields=["job"])
    return run
