"""``manage.py vetting_reliability LABELS.csv [--gold GOLD.csv] [--json]``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation.output import to_json
from evaluation.reliability import format_table, reliability_report
from records.jsonl import InputFileError


class Command(BaseCommand):
    help = (
        "Reviewers' reliability from their verdicts (Dawid-Skene): per item the posterior over the labels, per "
        "reviewer the confusion matrix and accuracy. LABELS: CSV item_uid,reviewer,label (one verdict per reviewer "
        "and item); GOLD: CSV item_uid,label, known answers clamped as the items' truth."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("labels", help="CSV with columns item_uid,reviewer,label")
        parser.add_argument("--gold", help="CSV with columns item_uid,label: items whose label is known")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **opts):
        try:
            report = reliability_report(opts["labels"], opts["gold"])
        except InputFileError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(to_json(report) if opts["json"] else format_table(report), ending="")
