"""Consistent backup and restore of the whole database with PostgreSQL's own pg_dump / pg_restore."""

import subprocess
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from portal.dbtools import database_url, pg_program


class Command(BaseCommand):
    help = "Write a consistent backup (pg_dump custom format, one snapshot) of the portal database to FILE."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, **options):
        target: Path = options["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        # pg_dump reads everything inside one repeatable-read snapshot: the backup is consistent while users work.
        result = subprocess.run(
            [str(pg_program("pg_dump")), "--format=custom", "--no-owner", f"--file={target}", database_url()],
            capture_output=True,
            text=True,
        )
        if result.returncode:
            raise CommandError(f"pg_dump failed: {result.stderr.strip()}")
        self.stdout.write(self.style.SUCCESS(f"Backup written to {target} ({target.stat().st_size:,} bytes)"))
