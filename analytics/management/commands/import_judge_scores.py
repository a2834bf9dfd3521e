"""``manage.py import_judge_scores --study ID [--scale LABELS] FILE``: an external judge's per-answer scores (or
labels) into a study."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from analytics.judges.scores import judge_scores_import
from evaluation.agreement import StatsInputError
from evaluation.judges import parse_label_scale
from ranking.models import Study
from records.jsonl import InputFileError


class Command(BaseCommand):
    help = (
        "Import external judges' per-answer scores (CSV or JSONL: item_uid, system, judge and score, higher = better, "
        "or label) into a study; all or nothing; a judge imported again has its scores replaced."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", type=int, required=True, help="the study's id")
        parser.add_argument(
            "--scale",
            metavar="LABELS",
            help="the judges' labels best first, comma-separated (default: the study's tag scale)",
        )
        parser.add_argument("file", help="CSV or JSONL (.jsonl) file of scores or labels")

    def handle(self, *args, **opts):
        study = Study.objects.filter(pk=opts["study"]).first()
        if study is None:
            raise CommandError(f"--study {opts['study']}: no such study")
        try:
            scale = parse_label_scale(opts["scale"])
            result = judge_scores_import(study=study, source=opts["file"], name=opts["file"], user=None, scale=scale)
        except StatsInputError as exc:
            raise CommandError(f"Nothing was imported: --scale: {exc}") from exc
        except InputFileError as exc:
            raise CommandError(f"Nothing was imported: {exc}") from exc
        self.stdout.write(f"Imported {result.total:,} scores into “{study.name}”: {result.summary}.")
