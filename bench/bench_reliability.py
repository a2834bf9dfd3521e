"""Time the Dawid–Skene fit of the vetting labels (:func:`stats.dawid_skene.fit`) at a large study's size.

Data (synthetic, seeded): ``--items`` items, each labelled once and a share ``--per-item - 1`` of them a second
time, by ``--workers`` reviewers of accuracies between 0.6 and 0.95 (one of them labelling at random), over
``--labels`` labels with a skewed truth; a share ``--gold`` of the items has a known answer. The default, 200,000
items x 1.5 labels (300,000 labels) by 30 reviewers over 3 labels, is the size the fit is required to handle in
well under 10 s on a 2-core machine.

Printed: the fit's time (best of ``--repeat``), its iterations, its own peak of traced allocations (tracemalloc,
which sees numpy's arrays; a separate run) and the process's peak resident memory. ``--report`` also times the
``vetting_reliability`` command's work on the same labels written as a CSV: read, checked, fitted and turned
into the report's dict.

No database.

Run: .venv/bin/python bench/bench_reliability.py [--items 200000] [--per-item 1.5] [--workers 30] [--report]
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from _django import ROOT, own_peak_mib

sys.path.insert(0, str(ROOT))

from stats.dawid_skene import fit  # noqa: E402


def make_labels(args) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[int, int]]:
    """Rows ``(items, workers, labels)``, each item's truth, and the gold."""
    rng = np.random.default_rng(args.seed)
    skew = np.r_[0.7, np.full(args.labels - 1, 0.3 / (args.labels - 1))]
    truth = rng.choice(args.labels, args.items, p=skew)
    again = rng.choice(args.items, int(round((args.per_item - 1) * args.items)), replace=False)
    items = np.concatenate([np.arange(args.items), again])
    # a second label comes from another reviewer than the first
    first = rng.integers(0, args.workers, args.items)
    workers = np.concatenate([first, (first[again] + rng.integers(1, args.workers, again.size)) % args.workers])
    skill = rng.uniform(0.6, 0.95, args.workers)
    skill[0] = 0.0  # a reviewer who labels at random
    right = rng.random(items.size) < skill[workers]
    labels = np.where(right, truth[items], rng.integers(0, args.labels, items.size))
    gold_items = rng.choice(args.items, int(args.gold * args.items), replace=False)
    gold = {int(i): int(truth[i]) for i in gold_items}
    return items, workers, labels, truth, gold


def fit_labels(args, items, workers, labels, gold):
    return fit(
        items, workers, labels, n_items=args.items, n_workers=args.workers, n_labels=args.labels, true_labels=gold
    )


def time_report(items, workers, labels, gold) -> tuple[float, int]:
    from evaluation.reliability import reliability_report

    with tempfile.TemporaryDirectory() as folder:
        labels_csv, gold_csv = Path(folder) / "labels.csv", Path(folder) / "gold.csv"
        rows = (f"q{i},r{w},v{v}\n" for i, w, v in zip(items.tolist(), workers.tolist(), labels.tolist(), strict=True))
        labels_csv.write_text("item_uid,reviewer,label\n" + "".join(rows), encoding="utf-8")
        gold_csv.write_text("item_uid,label\n" + "".join(f"q{i},v{v}\n" for i, v in gold.items()), encoding="utf-8")
        start = time.perf_counter()
        report = reliability_report(labels_csv, gold_csv)
        return time.perf_counter() - start, len(report["items"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--per-item", type=float, default=1.5, help="labels per item, from 1 to 2")
    parser.add_argument("--workers", type=int, default=30)
    parser.add_argument("--labels", type=int, default=3)
    parser.add_argument("--gold", type=float, default=0.01, help="share of items with a known answer")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20250607)
    parser.add_argument("--report", action="store_true", help="also time the command's read, fit and report")
    args = parser.parse_args()
    if not 1 <= args.per_item <= 2 or args.workers < 2 or args.labels < 2:
        parser.error("--per-item must be from 1 to 2, --workers and --labels at least 2")

    items, workers, labels, truth, gold = make_labels(args)
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = fit_labels(args, items, workers, labels, gold)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    fit_labels(args, items, workers, labels, gold)
    traced_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()

    agree = float((result.posteriors.argmax(axis=1) == truth).mean())
    print(
        f"{platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}, {platform.machine()}"
    )
    print(
        f"{items.size:,} labels on {args.items:,} items by {args.workers} reviewers, {args.labels} labels, "
        f"{len(gold):,} gold"
    )
    print(f"fit: {min(times):.2f} s (best of {args.repeat}; all {', '.join(f'{t:.2f}' for t in times)})")
    print(f"iterations: {result.iterations}; most probable label = truth on {agree:.1%} of items")
    print(
        f"fit's peak traced allocations: {traced_peak:.0f} MiB; process peak resident memory: {own_peak_mib():.0f} MiB"
    )
    if args.report:
        seconds, n_items = time_report(items, workers, labels, gold)
        print(f"command's work (read CSV, fit, report dict of {n_items:,} items): {seconds:.2f} s")
        print(f"process peak resident memory after it: {own_peak_mib():.0f} MiB")


if __name__ == "__main__":
    main()
