from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services.release_nuggets import NUGGETS_FORMAT
from annotation.services.releases import EXPORT_FORMATS, release_export, release_get
from portal.errors import DomainError


class Command(BaseCommand):
    help = (
        "Export release NAME (or NAME@VERSION) byte for byte: ClinIQLink seven-file layout, CSV, Parquet or JSONL "
        "(with nuggets.jsonl when frozen with nuggets), or --format nuggets for nuggets.jsonl alone."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--format", choices=(*EXPORT_FORMATS, NUGGETS_FORMAT), default="cliniqlink")
        parser.add_argument("--out", type=Path, required=True)

    def handle(self, *args, **options):
        try:
            release = release_get(options["name"])
            paths = release_export(release=release, fmt=options["format"], out_dir=options["out"])
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        for path in paths:
            manifest = release.manifests["jsonl" if options["format"] == NUGGETS_FORMAT else options["format"]]
            self.stdout.write(f"{manifest[path.name]}  {path}")
        self.stdout.write(self.style.SUCCESS(f"Exported {release.label} ({release.item_count} items)"))
