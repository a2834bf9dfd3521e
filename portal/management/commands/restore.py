"""Restore a backup written by `manage.py backup` into the configured (normally empty) database."""

import subprocess
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from portal.dbtools import database_url, pg_program


class Command(BaseCommand):
    help = "Restore FILE (from `manage.py backup`) into the configured database, replacing what is there."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--yes", action="store_true", help="do not ask before replacing existing data")

    def handle(self, *args, **options):
        source: Path = options["file"]
        if not source.exists():
            raise CommandError(f"{source}: no such file")
        if not options["yes"] and "annotation_qaitem" in connection.introspection.table_names():
            answer = input("The database already has portal tables; replace them with the backup? [y/N] ")
            if answer.strip().lower() != "y":
                raise CommandError("Restore cancelled.")
        connection.close()
        result = subprocess.run(
            [
                str(pg_program("pg_restore")),
                "--clean",
                "--if-exists",
                "--no-owner",
                "--single-transaction",
                f"--dbname={database_url()}",
                str(source),
            ],
            capture_output=True,
            text=True,
        )
        if result.returncode:
            raise CommandError(f"pg_restore failed: {result.stderr.strip()}")
        self.stdout.write(self.style.SUCCESS(f"Restored {source}"))
