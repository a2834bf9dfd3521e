"""``manage.py score_promptcblue GOLD PREDICTIONS [--json] [--present-tasks]``: PromptCBLUE's official scores."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation.output import to_json
from evaluation.promptcblue import format_text, score_files
from records.jsonl import InputFileError


class Command(BaseCommand):
    help = (
        "Score a model's PromptCBLUE answers as the official evaluation does (the 18 tasks parsed with the official "
        "templates, each task's own metric, the overall as the mean of 18 figures ×100). GOLD: JSONL records as the "
        "official dev.json; PREDICTIONS: JSONL with sample_id and the generated target. Needs no database."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("gold", help="JSONL of the gold records (sample_id, task_dataset, target, answer_choices)")
        parser.add_argument("predictions", help="JSONL of the generated answers (sample_id, target)")
        parser.add_argument("--json", action="store_true", help='print the official {"score", "scoreJson"} object')
        parser.add_argument(
            "--present-tasks",
            action="store_true",
            help="average over the tasks in the gold file only (not comparable to the official overall)",
        )

    def handle(self, *args, **opts):
        try:
            result = score_files(opts["gold"], opts["predictions"], present_tasks=opts["present_tasks"])
        except InputFileError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(to_json(result.report) if opts["json"] else format_text(result), ending="")
