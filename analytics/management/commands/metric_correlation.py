"""``manage.py metric_correlation --rankings FILE.csv --scores FILE.csv [--json] [--exclude-system S]``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from stats.cli import StatsInputError, format_text, metric_correlation_report, to_json


class Command(BaseCommand):
    help = (
        "How well a metric tracks the human rankings: per-item Kendall tau-b (mean, bootstrap CI), tie-aware "
        "pairwise accuracy, system-level Pearson/Spearman, and Bradley-Terry strengths. Rankings: "
        "item,annotator,answer,rank,system (1 = best); scores: item,system,score (higher = better)."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("--rankings", required=True, help="CSV with item,annotator,answer,rank,system")
        parser.add_argument("--scores", required=True, help="CSV with item,system,score")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--exclude-system",
            action="append",
            default=[],
            dest="exclude",
            metavar="SYSTEM",
            help="leave this system out (e.g. reference); may be repeated",
        )
        parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples")
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed")

    def handle(self, *args, **opts):
        try:
            report = metric_correlation_report(
                opts["rankings"],
                opts["scores"],
                exclude=opts["exclude"],
                n_resamples=opts["resamples"],
                seed=opts["seed"],
            )
        except StatsInputError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(to_json(report) if opts["json"] else format_text(report), ending="")
