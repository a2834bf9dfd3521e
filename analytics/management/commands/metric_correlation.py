"""``manage.py metric_correlation --rankings FILE.csv [--scores FILE.csv] [--judges FILE [--judge-scale LABELS]]
[--answers FILE] [--tie-calibration] [--permutations N] [--json] [--exclude-system S]``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation.agreement import StatsInputError, format_text
from evaluation.judges import judge_correlation_report, parse_label_scale
from evaluation.output import to_json
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED


class Command(BaseCommand):
    help = (
        "How well a metric tracks the human rankings: per-item Kendall tau-b (mean, bootstrap CI), tie-aware "
        "pairwise accuracy, system-level Pearson/Spearman, and Bradley-Terry strengths; with --judges, every "
        "judge's tie-aware accuracy, significance clusters and place among the physicians. Rankings: "
        "item,annotator,answer,rank,system (1 = best); scores: item,system,score (higher = better); judges "
        "(CSV or JSONL): item_uid,system,judge and score or label (with --judge-scale)."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("--rankings", required=True, help="CSV with item,annotator,answer,rank,system")
        parser.add_argument("--scores", help="CSV with item,system,score (the metric, called 'metric' among judges)")
        parser.add_argument(
            "--judges",
            help="CSV or JSONL with item_uid,system,judge and a score (higher = better) or a label: any automatic judges",
        )
        parser.add_argument(
            "--judge-scale",
            metavar="LABELS",
            help="the judges' labels best first, comma-separated (e.g. 'good,okay,bad'): labels score by their place",
        )
        parser.add_argument(
            "--answers", help="CSV or JSONL with item_uid,system,response: adds the style-controlled leaderboard"
        )
        parser.add_argument(
            "--tie-calibration",
            action="store_true",
            help="also report each judge's acc_eq at the tie threshold that maximises it (and held out)",
        )
        parser.add_argument(
            "--permutations", type=int, default=None, help="permutation resamples for significance (default 1000)"
        )
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
            if opts["permutations"] is not None and opts["permutations"] < 1:
                raise StatsInputError("--permutations must be a positive number")
            report = judge_correlation_report(
                opts["rankings"],
                opts["scores"],
                judges_path=opts["judges"],
                judge_scale=parse_label_scale(opts["judge_scale"]),
                answers_path=opts["answers"],
                tie_calibrate=opts["tie_calibration"],
                n_permutations=opts["permutations"],
                exclude=opts["exclude"],
                n_resamples=opts["resamples"],
                seed=opts["seed"],
            )
        except StatsInputError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(to_json(report) if opts["json"] else format_text(report), ending="")
