from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from portal.errors import DomainError
from portal.numbers import whole_number
from ranking.models import Study
from ranking.services.exports import FORMATS, rankings_export


class Command(BaseCommand):
    help = (
        "Export a study's rankings and tags (csv / parquet, one row per ranker × answer), SHROOM-style JSON, or "
        "the rankings as pairwise preferences (preferences: JSON Lines of prompt / chosen / rejected with the "
        "physicians' counts, as DPO trainers read; physicians counted, never named); for "
        "nugget studies the nugget labels (nugget-labels: JSONL for nugget_eval --labels; nugget-csv) and the "
        "sentence marks (sentence-marks); for span studies the hallucination spans (spans-jsonl: Mu-SHROOM JSON "
        "Lines; spans-csv, spans-parquet: one row per span)."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="Study id or name.")
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--out", type=Path, required=True)
        parser.add_argument(
            "--identities",
            action="store_true",
            help="E-mail addresses instead of pseudonyms (not for preferences: nobody is named there).",
        )
        parser.add_argument(
            "--blind-systems", action="store_true", help='Span exports: systems as "system 1", "system 2"….'
        )

    def handle(self, *args, **o):
        key = o["study"]
        number = whole_number(key)
        study = Study.objects.filter(pk=number).first() if number is not None else None
        study = study or Study.objects.filter(name=key).first()
        if study is None:
            raise CommandError(f"No study with id or name {key!r}.")
        try:
            data = rankings_export(
                study=study, fmt=o["format"], identities=o["identities"], blind_systems=o["blind_systems"]
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        o["out"].write_bytes(data)
        self.stdout.write(self.style.SUCCESS(f"Wrote {len(data):,} bytes to {o['out']}."))
