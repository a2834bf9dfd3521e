"""``manage.py audit_prune [--days N]``: the daily deletion of audit entries past their retention, on demand."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from portal.audit_trail import audit_prune


class Command(BaseCommand):
    help = (
        "Delete the audit entries older than --days (default AUDIT_RETENTION_DAYS); the database refuses to delete "
        "any younger one. The worker started with --beat does this daily."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=settings.AUDIT_RETENTION_DAYS)

    def handle(self, *args, **opts):
        if opts["days"] < 1:
            raise CommandError("--days must be at least 1")
        deleted = audit_prune(older_than_days=opts["days"])
        self.stdout.write(
            self.style.SUCCESS(
                f"Deleted {deleted} audit entr{'y' if deleted == 1 else 'ies'} older than {opts['days']} days"
            )
        )
