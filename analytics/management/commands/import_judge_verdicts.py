"""``manage.py import_judge_verdicts --study ID FILE``: an external judge's pairwise verdicts (which of two answers it
preferred, in the order it was shown them) into a study."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from analytics.judges.verdicts import judge_verdicts_import
from ranking.models import Study
from records.jsonl import InputFileError


class Command(BaseCommand):
    help = (
        "Import external judges' pairwise verdicts (CSV or JSONL: item_uid, judge, first, second, verdict; first and "
        "second the systems in the order shown, verdict first, second or tie) into a study; all or nothing; a judge "
        "imported again has its verdicts replaced."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", type=int, required=True, help="the study's id")
        parser.add_argument("file", help="CSV or JSONL (.jsonl) file of pairwise verdicts")

    def handle(self, *args, **opts):
        study = Study.objects.filter(pk=opts["study"]).first()
        if study is None:
            raise CommandError(f"--study {opts['study']}: no such study")
        try:
            result = judge_verdicts_import(study=study, source=opts["file"], name=opts["file"], user=None)
        except InputFileError as exc:
            raise CommandError(f"Nothing was imported: {exc}") from exc
        self.stdout.write(f"Imported {result.total:,} verdicts into “{study.name}”: {result.summary}.")
