import json

from django.core.management.base import BaseCommand, CommandError

from annotation.services.releases import release_freeze
from portal.errors import DomainError


class Command(BaseCommand):
    help = (
        "Freeze a new, immutable version of release NAME. Default rule: verified correct, final GP relevance 5, "
        "no open feedback or dispute. --rule takes JSON to change its parameters."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--note", default="")
        parser.add_argument("--rule", default="{}", help='e.g. \'{"min_relevance": 4, "qa_types": ["list"]}\'')
        parser.add_argument(
            "--with-nuggets", action="store_true", help="Freeze the items' validated nuggets with them (nuggets.jsonl)."
        )

    def handle(self, *args, **options):
        try:
            rule = json.loads(options["rule"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"--rule is not valid JSON: {exc}") from exc
        try:
            release = release_freeze(
                name=options["name"], rule=rule, note=options["note"], with_nuggets=options["with_nuggets"]
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            self.style.SUCCESS(f"Frozen {release.label}: {release.item_count} items, checksum {release.checksum}")
        )
