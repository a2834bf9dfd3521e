from pathlib import Path

from django.core.management.base import BaseCommand

from annotation.services.judgement_exports import FORMATS, judgements_export


class Command(BaseCommand):
    help = "Export reviews, adjudications and disputes (one row per judgement) or SHROOM-style JSON per item."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--out", type=Path, required=True)
        parser.add_argument("--identities", action="store_true", help="annotator emails instead of pseudonyms")

    def handle(self, *args, **options):
        for path in judgements_export(fmt=options["format"], out_dir=options["out"], identities=options["identities"]):
            self.stdout.write(str(path))
