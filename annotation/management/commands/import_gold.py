from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services.gold import gold_import
from portal.errors import DomainError


class Command(BaseCommand):
    help = (
        "Mark items as gold in bulk from a CSV or JSON array with uid, expected_verdict "
        "(correct / incorrect / cannot_tell), and optionally planted_error and note. All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, **options):
        path = options["file"]
        if not path.exists():
            raise CommandError(f"{path}: no such file")
        try:
            result = gold_import(path=path, by=None)
        except DomainError as exc:
            raise CommandError(f"Import refused, no item was marked. {exc}") from exc
        self.stdout.write(self.style.SUCCESS(f"Gold items: {result['created']} new, {result['updated']} updated."))
