from django.core.management.base import BaseCommand, CommandError

from annotation.services.releases import release_freeze
from portal.errors import DomainError
from portal.importing import ImportProblem, Limits, parse_json


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
        try:  # the one loader of people's JSON: NaN, 1e400 or a key given twice is refused, naming the field
            rule = parse_json(options["rule"], Limits(), "--rule", records=False)
        except ImportProblem as exc:
            raise CommandError(str(exc)) from exc
        try:
            release = release_freeze(
                name=options["name"], rule=rule, note=options["note"], with_nuggets=options["with_nuggets"]
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            self.style.SUCCESS(f"Frozen {release.label}: {release.item_count} items, checksum {release.checksum}")
        )
