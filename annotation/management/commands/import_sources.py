from pathlib import Path

from django.core.management.base import BaseCommand

from annotation.services.imports import sources_import
from portal.cli import file_import


class Command(BaseCommand):
    help = "Import source passages (JSON array or CSV with paragraph_id, isbn, page, text); links cited items."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, **options):
        result = file_import(options["file"], lambda path: sources_import(paths=[path]), nothing="nothing was imported")
        self.stdout.write(
            self.style.SUCCESS(
                f"Passages: {result['created']} new, {result['updated']} updated; {result['items_linked']} item(s) linked."
            )
        )
