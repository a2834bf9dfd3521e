"""``manage.py uploads_prune [--days N]``: the daily deletion of old uploaded files, on demand."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from portal.uploads import uploads_prune


class Command(BaseCommand):
    help = (
        "Delete the uploaded files of jobs that ended more than --days ago (default PORTAL_UPLOAD_RETENTION_DAYS), "
        "and upload folders no job reads once that old. The worker started with --beat does this daily."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=settings.PORTAL_UPLOAD_RETENTION_DAYS)

    def handle(self, *args, **opts):
        if opts["days"] < 0:
            raise CommandError("--days cannot be negative")
        report = uploads_prune(older_than_days=opts["days"])
        self.stdout.write(
            self.style.SUCCESS(
                f"Deleted the uploaded files of {len(report.jobs)} job(s) and {len(report.orphans)} folder(s) "
                "no job reads"
            )
        )
