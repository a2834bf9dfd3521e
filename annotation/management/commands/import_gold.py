from pathlib import Path

from django.core.management.base import BaseCommand

from annotation.services.gold import gold_import
from portal.cli import file_import


class Command(BaseCommand):
    help = (
        "Mark items as gold in bulk from a CSV or JSON array with uid, expected_verdict "
        "(correct / incorrect / cannot_tell), and optionally planted_error and note. All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, **options):
        result = file_import(
            options["file"], lambda path: gold_import(path=path, by=None), nothing="no item was marked"
        )
        self.stdout.write(self.style.SUCCESS(f"Gold items: {result['created']} new, {result['updated']} updated."))
