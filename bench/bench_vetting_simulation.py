"""Simulated vetting rounds for both second-review policies: how many wrong items each releases, for how many
judgements, and whether the portal's estimate of the wrong items released (its 95 % interval) holds the truth.

Run: .venv/bin/python bench/bench_vetting_simulation.py [--runs 10] [--seed 2025] [--second-share 0.45]
Each run is ``manage.py simulate_vetting`` on a database of its own, a copy of one migrated template (the reliability
model reads every judgement in the database: a run sharing one with the runs before it would read their reviewers
and their wrong shares too, which no vetting round does), with
its settings drawn from the issue's range: 1,500 to 3,000 items, 10 to 30 reviewers, a wrong share from 0 to 0.2,
reviewers' accuracies from LOW (0.6 to 0.8) to HIGH (0.85 to 0.97). Both policies get the same settings and seeds,
run after run, so their figures pair. A policy the portal does not have is reported and skipped.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import tempfile
import time
from io import StringIO
from pathlib import Path

from _django import setup_django

POLICIES = ("uniform", "adaptive")


def run_settings(rng: random.Random) -> dict:
    low = rng.uniform(0.6, 0.8)
    return {
        "items": rng.randint(1500, 3000),
        "reviewers": rng.randint(10, 30),
        "wrong_share": round(rng.uniform(0.0, 0.2), 3),
        "accuracy": (round(low, 3), round(rng.uniform(max(low, 0.85), 0.97), 3)),
        "seed": rng.randrange(1 << 30),
    }


def fresh_database(template: str, name: str) -> None:
    """Point Django at a new database ``name`` copied from the migrated ``template`` (dropped first if there)."""
    from django.db import connection, connections

    connections.close_all()
    with connection._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cursor.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    connection.settings_dict["NAME"] = name


def drop_database(name: str, template: str) -> None:
    from django.db import connection, connections

    connections.close_all()
    connection.settings_dict["NAME"] = template
    with connection._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')


def simulate(settings: dict, *, policy: str, second_share: float) -> dict:
    from django.core.management import call_command

    out = StringIO()
    call_command(
        "simulate_vetting",
        "--items", str(settings["items"]),
        "--reviewers", str(settings["reviewers"]),
        "--wrong-share", str(settings["wrong_share"]),
        "--accuracy", ",".join(map(str, settings["accuracy"])),
        "--second-share", str(second_share),
        "--policy", policy,
        "--seed", str(settings["seed"]),
        "--json",
        stdout=out,
    )  # fmt: skip
    return json.loads(out.getvalue())


def width_bound(mean: float) -> float:
    """The widest interval that still says something: 8 √max(mean, 4) + 4."""
    return 8 * math.sqrt(max(mean, 4)) + 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10, help="Runs per policy.")
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--second-share", type=float, default=0.45)
    args = parser.parse_args()
    setup_django("portal_bench_vetting_simulation")
    from django.conf import settings as django_settings
    from django.core.management.base import CommandError
    from django.db import connection

    with tempfile.TemporaryDirectory() as tmp:
        django_settings.RELEASE_FILES_DIR = Path(tmp) / "release-files"  # the kept files go with the database
        rng = random.Random(args.seed)
        grid = [run_settings(rng) for _ in range(args.runs)]
        totals = {policy: {"wrong": 0, "released": 0, "judgements": 0, "adjudications": 0, "covered": 0, "narrow": 0, "runs": 0}
                  for policy in POLICIES}  # fmt: skip
        header = (
            "policy    items revs  wrong  accuracy    released wrong_rel judgements  estimate (95 %)        covered"
        )
        print(header)
        template = connection.settings_dict["NAME"]
        for run, settings in enumerate(grid):
            for policy in POLICIES:
                started = time.perf_counter()
                run_database = f"{template}_run{run}_{policy}"
                fresh_database(template, run_database)
                # release ids start again in each database: each its own folder of kept files
                django_settings.RELEASE_FILES_DIR = Path(tmp) / f"release-files-{run}-{policy}"
                try:
                    report = simulate(settings, policy=policy, second_share=args.second_share)
                except CommandError as refusal:
                    print(f"{policy:<9} not run: {refusal}")
                    continue
                finally:
                    drop_database(run_database, template)
                seconds = time.perf_counter() - started
                estimate = report["estimated_wrong_released"]
                covered = estimate["low"] <= report["wrong_released"] <= estimate["high"]
                narrow = estimate["high"] - estimate["low"] <= width_bound(estimate["mean"])
                total = totals[policy]
                total["wrong"] += report["wrong_released"]
                total["released"] += report["released"]
                total["judgements"] += report["judgements"]
                total["adjudications"] += report["adjudications"]
                total["covered"] += covered
                total["narrow"] += narrow
                total["runs"] += 1
                low, high = settings["accuracy"]
                print(
                    f"{policy:<9} {settings['items']:>5} {settings['reviewers']:>4} {settings['wrong_share']:>6.3f} "
                    f"{low:.2f}-{high:.2f}  {report['released']:>8} {report['wrong_released']:>9} "
                    f"{report['judgements']:>10}  {estimate['mean']:>6.1f} [{estimate['low']:g}, {estimate['high']:g}]"
                    f"{'':<6} {'yes' if covered else 'NO'}{'' if narrow else ' (wide)'}  {seconds:.0f} s",
                    flush=True,
                )
        print()
        for policy, total in totals.items():
            if total["runs"]:
                print(
                    f"{policy}: {total['runs']} runs, {total['wrong']} wrong released of {total['released']} released, "
                    f"{total['judgements']} judgements ({total['adjudications']} adjudications); the interval covered the truth in {total['covered']} of "
                    f"{total['runs']} runs, within the width bound in {total['narrow']}"
                )


if __name__ == "__main__":
    main()
