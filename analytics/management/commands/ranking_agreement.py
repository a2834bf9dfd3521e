"""``manage.py ranking_agreement FILE.csv [--json]``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation.agreement import StatsInputError, format_text, ranking_agreement_report
from evaluation.output import to_json
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED


class Command(BaseCommand):
    help = (
        "Agreement between rankers for a long CSV with columns item,annotator,answer,rank (1 = best, equal "
        "ranks are ties): tie-corrected Kendall's W per item and pooled, and mean pairwise Kendall tau-b."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("file", help="CSV with columns item,annotator,answer,rank")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples")
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed")

    def handle(self, *args, **opts):
        try:
            report = ranking_agreement_report(opts["file"], n_resamples=opts["resamples"], seed=opts["seed"])
        except StatsInputError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(to_json(report) if opts["json"] else format_text(report), ending="")
