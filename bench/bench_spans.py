"""Time the hallucination-detector leaderboard (the detector pages and their CSV) at a large span study's size.

Data (synthetic, seeded): ``--answers`` answers of about ``--length`` characters across ``--systems`` systems, each
read by ``--readers`` physicians who mark 0 to 3 spans, and ``--detectors`` detectors predicting soft labels (0 to 4
runs of random shares) for every answer. The default, 80,000 answers each read by 3 physicians, is issue #22's study
at 10x: 10,000 questions x 8 answers x 3 rankers, every answer marked for spans.

Printed: the time of the whole leaderboard as the pages compute it (``analytics.span_detectors.detector_rows``:
labels, IoU and Spearman of every answer x detector, the bootstrap intervals overall and per system with
``--resamples``); and, on the same pairs in the same run, the correlation by the published scorer's way (scipy's
Spearman over the two per-character vectors) against ``metrics.spans.score_cor`` (constant stretches), with the
largest difference between the two.

No database: the rows are built in memory.

Run: .venv/bin/python bench/bench_spans.py [--answers 80000] [--detectors 5] [--resamples 1000] [--pairs 20000]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time

import numpy as np
from _django import ROOT


def setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def make_study(args) -> tuple[list, dict]:
    from analytics.models import SpanPrediction
    from ranking.span_rules import MarkedSpan
    from ranking.span_selectors import Annotation, AnswerSpans

    rng = random.Random(args.seed)

    def spans(length: int, most: int) -> list[tuple[int, int]]:
        found = []
        for _ in range(rng.randint(0, most)):
            start = rng.randrange(0, length - 10)
            found.append((start, min(length, start + rng.randint(5, 80))))
        return found

    read, predictions = [], {f"detector {d + 1}": {} for d in range(args.detectors)}
    for pk in range(1, args.answers + 1):
        length = max(50, int(rng.gauss(args.length, args.length / 3)))
        annotations = [
            Annotation(
                ranker_id=r, label=f"P{r}", spans=tuple(MarkedSpan(s, e, "extrinsic") for s, e in spans(length, 3))
            )
            for r in range(args.readers)
        ]
        read.append(
            AnswerSpans(
                answer_id=pk,
                question_id=pk // 8,
                item_uid=f"q{pk // 8}",
                question="",
                qa_type="short",
                lang="EN",
                system=f"system {pk % args.systems + 1}",
                is_reference=False,
                text="x" * length,
                annotations=annotations,
            )
        )
        for by_answer in predictions.values():
            soft = [{"start": s, "end": e, "prob": round(rng.random(), 3)} for s, e in spans(length, 4)]
            by_answer[pk] = SpanPrediction(
                soft_labels=soft, hard_labels=[[r["start"], r["end"]] for r in soft if r["prob"] > 0.5]
            )
    return read, predictions


def scorer_way(reference_soft: list[dict], predicted_soft: list[dict], length: int) -> float:
    """The published scorer's computation: scipy's Spearman over the two per-character vectors."""
    from scipy.stats import spearmanr

    from metrics.spans import soft_vector

    ref, pred = soft_vector(reference_soft, length), soft_vector(predicted_soft, length)
    ref_values, pred_values = len(set(np.round(ref, 8).tolist())), len(set(np.round(pred, 8).tolist()))
    if ref_values <= 1 or pred_values <= 1:
        return float(ref_values == pred_values)
    return float(spearmanr(ref, pred).statistic)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=80_000)
    parser.add_argument("--length", type=int, default=900, help="mean answer length in characters")
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--detectors", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=20_000, help="answer x detector pairs timed both ways")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    setup()
    from analytics.span_detectors import detector_rows
    from metrics.spans import score_cor

    started = time.perf_counter()
    read, predictions = make_study(args)
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    print(
        f"Study: {len(read)} answers read by {args.readers} physicians each, {args.systems} systems, "
        f"{args.detectors} detectors (built in {time.perf_counter() - started:.1f} s)"
    )

    started = time.perf_counter()
    board = detector_rows(read, predictions, n_resamples=args.resamples, seed=args.seed)
    board_s = time.perf_counter() - started
    pairs = len(read) * args.detectors
    print(
        f"Leaderboard (detector_rows, {args.resamples} resamples): {board_s:.2f} s for {pairs} answer x detector "
        f"pairs; best detector IoU {board['detectors'][0]['iou'].value:.4f}"
    )

    sample = [(a, by_answer[a.answer_id]) for by_answer in predictions.values() for a in read][: args.pairs]
    labels = [(a.soft_labels, p.soft_labels, len(a.text)) for a, p in sample]
    started = time.perf_counter()
    stretches = [score_cor(ref, pred, length) for ref, pred, length in labels]
    stretches_s = time.perf_counter() - started
    started = time.perf_counter()
    per_character = [scorer_way(ref, pred, length) for ref, pred, length in labels]
    per_character_s = time.perf_counter() - started
    difference = max(abs(a - b) for a, b in zip(stretches, per_character, strict=True))
    print()
    print(f"Spearman of {len(labels)} pairs (same pairs, same run):")
    print()
    print("| way | s | ms per pair | speed-up |")
    print("| --- | --- | --- | --- |")
    print(
        f"| per character (scipy, the scorer's way) | {per_character_s:.2f} | {per_character_s / len(labels) * 1000:.3f} | 1.0x |"
    )
    print(
        f"| constant stretches (metrics.spans.score_cor) | {stretches_s:.2f} | {stretches_s / len(labels) * 1000:.3f} | "
        f"{per_character_s / stretches_s:.1f}x |"
    )
    print()
    print(f"largest difference: {difference:.1e}")


if __name__ == "__main__":
    main()
