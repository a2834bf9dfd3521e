"""``manage.py simulate_vetting``: one simulated vetting round through the portal's services (annotation.simulation)."""

from __future__ import annotations

import argparse
import json

from django.core.management.base import BaseCommand, CommandError

from annotation.simulation import POLICIES, SimulationSettings, simulate_vetting
from portal.errors import DomainError


def _whole(least: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(f"must be a whole number of at least {least}, not {text!r}")
        return value

    return parse


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, not {text!r}")
    return value


def _accuracy_range(text: str) -> tuple[float, float]:
    parts = text.split(",")
    try:
        low, high = (_share(part) for part in parts) if len(parts) == 2 else (None, None)
    except argparse.ArgumentTypeError:
        low = high = None
    if low is None or high is None or low > high:
        raise argparse.ArgumentTypeError(f"must be LOW,HIGH: two numbers from 0 to 1, LOW at most HIGH, not {text!r}")
    return low, high


class Command(BaseCommand):
    help = (
        "Simulate a vetting round on the configured database: import items (a share of them truly wrong), admit "
        "reviewers and adjudicators of known accuracy, vet every item through the queue, review and adjudication "
        "services, freeze a release, and compare the wrong items released with the portal's estimate. Changes the "
        "vetting settings: for a throwaway or test database."
    )

    def add_arguments(self, parser):
        parser.add_argument("--items", type=_whole(1), default=2000, help="Items to vet (gold items come on top).")
        parser.add_argument("--reviewers", type=_whole(2), default=20)
        parser.add_argument("--wrong-share", type=_share, default=0.1, help="Share of the items truly wrong.")
        parser.add_argument("--accuracy", type=_accuracy_range, default=(0.6, 0.97), metavar="LOW,HIGH",
                            help="Reviewers' accuracies are drawn uniformly from LOW to HIGH.")  # fmt: skip
        parser.add_argument("--second-share", type=_share, default=0.45, help="The second-review share to set.")
        parser.add_argument("--policy", choices=POLICIES, default="uniform", help="The second-review policy to set.")
        parser.add_argument("--seed", type=_whole(0), default=1)
        parser.add_argument("--adjudicator-accuracy", type=_share, default=0.98)
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args, **options):
        config = SimulationSettings(
            items=options["items"],
            reviewers=options["reviewers"],
            wrong_share=options["wrong_share"],
            accuracy=tuple(options["accuracy"]),
            second_share=options["second_share"],
            policy=options["policy"],
            seed=options["seed"],
            adjudicator_accuracy=options["adjudicator_accuracy"],
        )
        try:
            report = simulate_vetting(config)
        except DomainError as refusal:
            raise CommandError(str(refusal)) from refusal
        if options["json"]:
            self.stdout.write(json.dumps(report))
            return
        estimate = report["estimated_wrong_released"]
        self.stdout.write(
            f"{report['items']} items ({report['policy']} second reviews): {report['reviews']} reviews "
            f"({report['second_reviews']} second), {report['adjudications']} adjudications; {report['released']} "
            f"released, {report['wrong_released']} of them wrong; estimated {estimate['mean']:.1f} "
            f"(95 % interval {estimate['low']:g} to {estimate['high']:g})."
        )
