"""``manage.py jobs_recover [--stale-minutes N]``: the periodic job recovery, on demand (after a broker restart)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from portal.jobs import jobs_recover


class Command(BaseCommand):
    help = (
        "Queue again the unfinished jobs that have shown no sign of life for --stale-minutes (default "
        "JOB_STALE_SECONDS): their task was lost by the broker. Running jobs whose worker died JOB_MAX_ATTEMPTS "
        "times are failed instead. The worker started with --beat does this every five minutes."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--stale-minutes",
            type=float,
            default=settings.JOB_STALE_SECONDS / 60,
            help="minutes without progress after which a queued or running job counts as lost",
        )

    def handle(self, *args, **opts):
        if opts["stale_minutes"] < 0:
            raise CommandError("--stale-minutes cannot be negative")
        report = jobs_recover(stale_after=timedelta(minutes=opts["stale_minutes"]))
        for pk in report.requeued:
            self.stdout.write(f"queued again: job {pk}")
        for pk in report.abandoned:
            self.stdout.write(f"failed (gave up): job {pk}")
        self.stdout.write(
            self.style.SUCCESS(f"{len(report.requeued)} job(s) queued again, {len(report.abandoned)} given up")
        )
