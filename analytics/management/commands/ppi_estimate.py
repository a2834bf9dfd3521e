"""``manage.py ppi_estimate --human HUMAN.csv --judge JUDGE.csv [--alpha 0.05] [--target-halfwidth H] [--json]``."""

from __future__ import annotations

import argparse
import math

from django.core.management.base import BaseCommand, CommandError

from evaluation.output import to_json
from evaluation.ppi import format_table, ppi_report
from records.jsonl import InputFileError


def _alpha(text: str) -> float:
    value = _number(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, not {text}")
    return value


def _halfwidth(text: str) -> float:
    value = _number(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, not {text}")
    return value


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


class Command(BaseCommand):
    help = (
        "Each system's mean physician score by prediction-powered inference (PPI++): physicians' values on a sample "
        "of items, a judge's values on every item. Per system the classical interval from the physicians alone, the "
        "PPI interval with its power-tuning lambda, and with --target-halfwidth the number of physician-labelled "
        "items (in all) the PPI estimate needs for that half-width. HUMAN and JUDGE: CSV item_uid,system,value "
        "(several HUMAN rows for an item and system are averaged; one JUDGE row per item and system)."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("--human", required=True, help="CSV with columns item_uid,system,value: physicians")
        parser.add_argument("--judge", required=True, help="CSV with columns item_uid,system,value: the judge")
        parser.add_argument("--alpha", type=_alpha, default=0.05, help="error level: intervals cover 1 - alpha")
        parser.add_argument(
            "--target-halfwidth", type=_halfwidth, help="half-width to reach: report the physician labels needed"
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **opts):
        try:
            report = ppi_report(
                opts["human"], opts["judge"], alpha=opts["alpha"], target_halfwidth=opts["target_halfwidth"]
            )
        except InputFileError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(to_json(report) if opts["json"] else format_table(report), ending="")
