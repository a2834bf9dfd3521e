"""Time the ``ppi_estimate`` command's work (:func:`evaluation.ppi.ppi_report`) at a large study's size.

Data (synthetic, seeded): ``--items`` questions answered by ``--systems`` systems, a judge's value on every
(question, system) and physicians' values on a share ``--labelled`` of them, one to three physicians per labelled
item; judges from close to useless to good. The default, 10,000 questions x 8 systems with a 10 % physician
sample (80,000 judge rows, about 16,000 physician rows), must be read, checked and estimated, with the number of
physician labels needed for ``--halfwidth``, in under ``--target`` seconds (2 s, the issue's).

Printed: the command's work (read both CSVs, check, average the physicians, estimate every system; best of
``--repeat``), the estimates alone on arrays already in memory, and the process's peak resident memory. Exits 1
when the command's work misses the target.

No database.

Run: .venv/bin/python bench/bench_ppi.py [--items 10000] [--systems 8] [--labelled 0.1] [--target 2]
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _django import ROOT, own_peak_mib

sys.path.insert(0, str(ROOT))

from evaluation.ppi import ppi_report, system_estimate  # noqa: E402


def make_rows(args) -> tuple[list[str], list[str]]:
    """The HUMAN and JUDGE CSVs' lines (without the header)."""
    rng = np.random.default_rng(args.seed)
    human, judge = [], []
    for s in range(args.systems):
        truth = rng.normal(3.0 + 0.1 * s, 1.0, args.items)
        slope, noise = rng.uniform(0.0, 1.0), rng.uniform(0.2, 2.0)
        judged = slope * truth + rng.normal(0.5, noise, args.items)
        judge += [f"q{i},system-{s},{v!r}\n" for i, v in enumerate(judged.tolist())]
        labelled = rng.choice(args.items, int(round(args.labelled * args.items)), replace=False)
        physicians = rng.integers(1, 4, labelled.size)
        items = np.repeat(labelled, physicians)
        values = truth[items] + rng.normal(0, 0.6, items.size)
        human += [f"q{i},system-{s},{v!r}\n" for i, v in zip(items.tolist(), values.tolist(), strict=True)]
    return human, judge


def time_report(args, folder: Path, human: list[str], judge: list[str]) -> tuple[list[float], dict]:
    human_csv, judge_csv = folder / "human.csv", folder / "judge.csv"
    human_csv.write_text("item_uid,system,value\n" + "".join(human), encoding="utf-8")
    judge_csv.write_text("item_uid,system,value\n" + "".join(judge), encoding="utf-8")
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        report = ppi_report(human_csv, judge_csv, target_halfwidth=args.halfwidth)
        times.append(time.perf_counter() - start)
    return times, report


def time_estimates(args) -> float:
    """The estimates alone, on each system's arrays (n labelled, N judge only), best of ``--repeat``."""
    rng = np.random.default_rng(args.seed)
    n = int(round(args.labelled * args.items))
    arrays = [(rng.normal(size=n), rng.normal(size=n), rng.normal(size=args.items - n)) for _ in range(args.systems)]
    best = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        for y, yhat, yhat_unlabeled in arrays:
            system_estimate(y, yhat, yhat_unlabeled, 0.05, args.halfwidth)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--labelled", type=float, default=0.1, help="share of items physicians labelled")
    parser.add_argument("--halfwidth", type=float, default=0.05, help="target half-width for the labels needed")
    parser.add_argument("--target", type=float, default=2.0, help="seconds the command's work must stay under")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20250607)
    args = parser.parse_args()
    if not 0 < args.labelled < 1 or args.labelled * args.items < 2:
        parser.error("--labelled must be between 0 and 1 and leave at least 2 labelled items per system")

    human, judge = make_rows(args)
    with tempfile.TemporaryDirectory() as folder:
        times, report = time_report(args, Path(folder), human, judge)
    estimates = time_estimates(args)
    needed = [s["human_needed"] for s in report["systems"].values()]

    print(
        f"{platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}, {platform.machine()}"
    )
    print(
        f"{args.items:,} questions x {args.systems} systems: {len(judge):,} judge rows, {len(human):,} physician rows "
        f"on {args.labelled:.0%} of the items"
    )
    print(
        f"command's work (read, check, estimate, labels needed for +/-{args.halfwidth}): {min(times):.3f} s "
        f"(best of {args.repeat}; all {', '.join(f'{t:.3f}' for t in times)}); target {args.target:g} s"
    )
    print(f"estimates alone, {args.systems} systems: {estimates * 1000:.1f} ms")
    print(f"physician-labelled items needed per system: {', '.join(map(str, needed))}")
    print(f"process peak resident memory: {own_peak_mib():.0f} MiB")
    if min(times) >= args.target:
        print(f"MISSED: {min(times):.3f} s is not under {args.target:g} s")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
