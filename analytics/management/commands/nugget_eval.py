"""``manage.py nugget_eval --nuggets N.jsonl --answers A.jsonl [--labels L.jsonl ...] [--auto] [--json]``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation.nugget_text import format_text
from evaluation.nuggets import nugget_eval_report
from evaluation.output import to_json
from metrics.nugget_io import NuggetInputError
from metrics.nuggets import DEFAULT_PARTIAL_THRESHOLD, DEFAULT_SUPPORT_THRESHOLD
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED


class Command(BaseCommand):
    help = (
        "Nugget scores per system and labeller (all, vital, strict, completeness, avoid hits, precision) with "
        "bootstrap intervals, and how far automatic labels agree with the physicians. Needs no database."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("--nuggets", required=True, help="JSONL: item_uid, nuggets [{id, text, importance}]")
        parser.add_argument("--answers", required=True, help="JSONL: item_uid, system, response")
        parser.add_argument(
            "--labels",
            action="append",
            default=[],
            metavar="FILE",
            help="JSONL: item_uid, system, nugget_id, label, labeller; may be repeated",
        )
        parser.add_argument("--auto", action="store_true", help="label every answer with the embedding matcher")
        parser.add_argument(
            "--judge",
            action="append",
            default=[],
            dest="judges",
            metavar="NAME",
            help="this labeller of --labels is an automatic judge, not a human; may be repeated",
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--support-threshold", type=float, default=DEFAULT_SUPPORT_THRESHOLD)
        parser.add_argument("--partial-threshold", type=float, default=DEFAULT_PARTIAL_THRESHOLD)
        parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples")
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed")

    def handle(self, *args, **opts):
        try:
            report = nugget_eval_report(
                opts["nuggets"],
                opts["answers"],
                opts["labels"],
                auto=opts["auto"],
                judges=opts["judges"],
                support_threshold=opts["support_threshold"],
                partial_threshold=opts["partial_threshold"],
                n_resamples=opts["resamples"],
                seed=opts["seed"],
            )
        except (NuggetInputError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(to_json(report) if opts["json"] else format_text(report), ending="")
