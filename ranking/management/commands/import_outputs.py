from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from portal.cli import cli_progress
from portal.errors import DomainError
from ranking.services.outputs import outputs_import


class Command(BaseCommand):
    help = (
        "Import one system's outputs, all-or-nothing: ClinIQLink harness output folders or files (true_false.json … "
        "multi_hop_inverse.json), JSONL lines {item_uid, system, response}, or PromptCBLUE predictions (lines "
        "{sample_id, target}, as the official test_predictions.json). Re-importing is idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--system", required=True, help="System name (created on first import).")
        parser.add_argument("--family", default="")
        parser.add_argument("--params", type=int, default=None, help="Parameter count.")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **options):
        try:
            with cli_progress("importing outputs", enabled=not options["no_progress"]) as progress:
                result = outputs_import(
                    system_name=options["system"],
                    paths=options["paths"],
                    family=options["family"],
                    parameter_count=options["params"],
                    progress=progress,
                )
        except DomainError as exc:
            raise CommandError(f"Import refused, nothing was imported. {exc}") from exc
        types = ", ".join(f"{k}: {v}" for k, v in sorted(result.by_type.items())) or "none"
        self.stdout.write(
            self.style.SUCCESS(
                f"{result.system}: {result.created} new, {result.updated} changed, {result.unchanged} unchanged ({types})."
            )
        )
