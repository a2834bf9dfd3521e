from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services.imports import sources_import
from portal.errors import DomainError


class Command(BaseCommand):
    help = "Import source passages (JSON array or CSV with paragraph_id, isbn, page, text); links cited items."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, **options):
        path = options["file"]
        if not path.exists():
            raise CommandError(f"{path}: no such file")
        try:
            result = sources_import(path=path)
        except DomainError as exc:
            raise CommandError(f"Import refused, nothing was imported. {exc}") from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Passages: {result['created']} new, {result['updated']} updated; {result['items_linked']} item(s) linked."
            )
        )
