from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services.imports import FORMATS, items_import
from portal.cli import cli_progress
from portal.errors import DomainError


class Command(BaseCommand):
    help = (
        "Import QA items, all-or-nothing: ClinIQLink folders or files (TF.json, MC.json, list.json, short.json, "
        "short_inverse.json, multi_hop.json, multi_hop_inverse.json) or PromptCBLUE JSONL (--format promptcblue)."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--format", choices=FORMATS, default="cliniqlink")
        parser.add_argument("--batch-name", default="")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **options):
        try:
            with cli_progress("importing items", enabled=not options["no_progress"]) as progress:
                result = items_import(
                    paths=options["paths"], fmt=options["format"], batch_name=options["batch_name"], progress=progress
                )
        except DomainError as exc:
            raise CommandError(f"Import refused, nothing was imported. {exc}") from exc
        types = ", ".join(f"{k}: {v}" for k, v in sorted(result.by_type.items())) or "none"
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {result.created} new item(s) ({types}); {result.existing} already in the portal."
            )
        )
