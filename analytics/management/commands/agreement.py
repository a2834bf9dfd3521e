"""``manage.py agreement FILE.csv --level nominal|ordinal|interval [--json] [--values a,b,c]``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation.agreement import StatsInputError, agreement_report, format_text, parse_scale
from evaluation.output import to_json
from stats.agreement import LEVELS
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED


class Command(BaseCommand):
    help = (
        "Inter-rater agreement for a long CSV with columns item,annotator,value (empty value = missing): "
        "Krippendorff's alpha, Fleiss' kappa, raw pairwise agreement, and Cohen's kappa (plain and "
        "quadratic) when there are exactly two annotators. Bootstrap 95% intervals resample items."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("file", help="CSV with columns item,annotator,value")
        parser.add_argument("--level", required=True, choices=[lv for lv in LEVELS if lv != "ratio"])
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--values",
            help="the full ordered scale, comma-separated (e.g. good,okay,bad); unused points still count",
        )
        parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples")
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed")

    def handle(self, *args, **opts):
        try:
            report = agreement_report(
                opts["file"],
                level=opts["level"],
                values=parse_scale(opts["values"]),
                n_resamples=opts["resamples"],
                seed=opts["seed"],
            )
        except StatsInputError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(to_json(report) if opts["json"] else format_text(report), ending="")
