"""``manage.py import_judge_labels --study ID FILE``: an external judge's nugget labels into a study."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from analytics.nuggets.judge_labels import judge_labels_import
from metrics.nugget_io import NuggetInputError
from ranking.models import Study


class Command(BaseCommand):
    help = (
        "Import external judges' nugget labels (JSONL: item_uid, system, nugget_id, label, judge) into a nugget "
        "study; all or nothing; a judge imported again has its labels replaced."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", type=int, required=True, help="the study's id")
        parser.add_argument("file", help="JSONL file of labels")

    def handle(self, *args, **opts):
        study = Study.objects.filter(pk=opts["study"]).first()
        if study is None:
            raise CommandError(f"--study {opts['study']}: no such study")
        try:
            result = judge_labels_import(study=study, source=opts["file"], name=opts["file"], user=None)
        except NuggetInputError as exc:
            raise CommandError(f"Nothing was imported: {exc}") from exc
        self.stdout.write(f"Imported {result.total:,} labels into “{study.name}”: {result.summary}.")
