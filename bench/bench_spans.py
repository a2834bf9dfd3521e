"""Time the hallucination-detector leaderboard (the detector pages and their CSV) at a large span study's size.

Data (synthetic, seeded): ``--answers`` answers of about ``--length`` characters across ``--systems`` systems, each
read by ``--readers`` physicians who mark 0 to 3 spans, and ``--detectors`` detectors predicting soft labels (0 to 4
runs of random shares) for every answer. The default, 80,000 answers each read by 3 physicians, is issue #22's study
at 10x: 10,000 questions x 8 answers x 3 rankers, every answer marked for spans.

Printed: the time of the whole leaderboard as the pages compute it (``analytics.spans.detectors.detector_rows``:
labels, IoU and Spearman of every answer x detector, the bootstrap intervals overall and per system with
``--resamples``); and, on the same pairs in the same run, the correlation by the published scorer's way (scipy's
Spearman over the two per-character vectors) against ``metrics.spans.score_cor`` (constant stretches), with the
largest difference between the two.

No database: the rows are built in memory.

``--database``: the same study written to a throwaway PostgreSQL (bulk inserts, not timed), then what the portal
does with it, timed: the import of the last detector's predictions from a JSON Lines file through the page's
service; the leaderboard job it queues (run in this process, as without a broker); the same job again in a fresh
process, for its peak memory alone; and the detector page and one question's span page, each requested 10 times
by an organizer (the page reads the stored leaderboard; it never computes it).

Run: .venv/bin/python bench/bench_spans.py [--answers 80000] [--detectors 5] [--resamples 1000] [--pairs 20000]
     .venv/bin/python bench/bench_spans.py --database [--answers 80000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time

import numpy as np
from _django import ROOT, own_peak_mib, setup_django
from _pages import time_pages


def setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def make_study(args) -> tuple[list, dict]:
    from analytics.models import SpanPrediction
    from ranking.rules.spans import MarkedSpan
    from ranking.selectors.spans import Annotation, AnswerSpans

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


def seed_database(args, read: list, predictions: dict):
    """The in-memory study as rows (questions of 8 answers, one submitted task per physician and question, their
    spans, every detector's predictions but the last); returns the study, an organizer and the last detector's file."""
    from analytics.models import SpanDetector, SpanPrediction
    from annotation.models import ImportBatch, QAItem
    from metrics.spans import merge_spans
    from portal.services import person_admit
    from ranking.models import HallucinationSpan, RankingTask, Study, StudyAnswer, StudyQuestion, System

    organizer = person_admit(email="organizer@bench.portal", institution=None, roles=["organizer"])
    rankers = [
        person_admit(email=f"physician{r}@bench.portal", institution=None, roles=["ranker"])
        for r in range(args.readers)
    ]
    study = Study.objects.create(name="bench span study", ask_spans=True, ask_ranking=False, overlap=args.readers)
    systems = {a.system for a in read}
    by_name = {name: System.objects.create(name=name) for name in sorted(systems)}
    study.systems.set(by_name.values())
    batch = ImportBatch.objects.create(name="bench spans", fmt="cliniqlink")
    uids = sorted({a.question_id for a in read})
    items = QAItem.objects.bulk_create(
        [
            QAItem(uid=f"q{q}", qa_type="short_answer", benchmark="cliniqlink", question=f"Question {q}?", answer="-",
                   raw={}, batch=batch)
            for q in uids
        ],
        batch_size=5000,
    )  # fmt: skip
    questions = StudyQuestion.objects.bulk_create(
        [StudyQuestion(study=study, item=item, position=i) for i, item in enumerate(items, 1)], batch_size=5000
    )
    question_of = dict(zip(uids, questions, strict=True))
    answers = StudyAnswer.objects.bulk_create(
        [StudyAnswer(question=question_of[a.question_id], system=by_name[a.system], text=a.text) for a in read],
        batch_size=5000,
    )
    row_of = {a.answer_id: row for a, row in zip(read, answers, strict=True)}
    by_question: dict[int, list] = {}
    for a in read:
        by_question.setdefault(a.question_id, []).append(a)
    tasks = {}
    for q, group in by_question.items():
        for r, ranker in enumerate(rankers):
            tasks[q, r] = RankingTask(
                study=study, question=question_of[q], ranker=ranker, seed="bench", status="submitted",
                order=[row_of[a.answer_id].pk for a in group], lease_expires_at=study.created_at,
                submitted_at=study.created_at,
            )  # fmt: skip
    RankingTask.objects.bulk_create(tasks.values(), batch_size=5000)
    HallucinationSpan.objects.bulk_create(
        [
            # a physician's marks on an answer never overlap once stored: the synthetic ones are merged first
            HallucinationSpan(
                task=tasks[a.question_id, r], answer=row_of[a.answer_id], start=start, end=end, kind="extrinsic"
            )
            for a in read
            for r, annotation in enumerate(a.annotations)
            for start, end in merge_spans((s.start, s.end) for s in annotation.spans)
        ],
        batch_size=5000,
    )
    names = list(predictions)
    for name in names[:-1]:
        detector = SpanDetector.objects.create(study=study, name=name, file="bench.jsonl")
        SpanPrediction.objects.bulk_create(
            [
                SpanPrediction(detector=detector, answer=row_of[pk], soft_labels=p.soft_labels,
                               hard_labels=p.hard_labels)
                for pk, p in predictions[name].items()
            ],
            batch_size=5000,
        )  # fmt: skip
    last = [
        json.dumps({"id": f"q{a.question_id}/{row_of[a.answer_id].pk}", "soft_labels": predictions[names[-1]][a.answer_id].soft_labels}).encode()
        for a in read
    ]  # fmt: skip
    return study, organizer, names[-1], last


def through_database(args) -> None:
    setup_django("portal_bench_spans")
    from django.conf import settings
    from django.db import transaction
    from django.test import Client
    from django.urls import reverse

    from analytics.models import SpanLeaderboard
    from analytics.spans.detectors import span_detector_import

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    started = time.perf_counter()
    read, predictions = make_study(args)
    study, organizer, last, lines = seed_database(args, read, predictions)
    print(
        f"Study in PostgreSQL: {len(read)} answers, {args.readers} physicians each, {args.detectors - 1} detectors "
        f"written in {time.perf_counter() - started:.0f} s (not timed below)"
    )
    del read, predictions
    with transaction.atomic():
        started = time.perf_counter()
        result = span_detector_import(study=study, detector=last, source=lines, name="last.jsonl", user=organizer)
        imported = time.perf_counter()
    job_done = time.perf_counter()  # without a broker the queued job runs as the transaction commits
    stored = SpanLeaderboard.objects.select_related("job").get(study=study)
    assert stored.job.status == "succeeded", stored.job.error
    print(f"Import of {result.predictions} predictions ({last}) through the page's service: {imported - started:.2f} s")
    print(
        f"Leaderboard job ({args.detectors} detectors, {stored.result['n_answers']} answers read, 1000 resamples, "
        f"reading the database included): {job_done - imported:.2f} s"
    )
    child = subprocess.run(
        [sys.executable, __file__, "--job-only", str(study.pk)], capture_output=True, text=True, check=True
    )
    print(child.stdout.strip())
    client = Client()
    client.force_login(organizer)
    question = study.questions.order_by("position").first()
    time_pages(
        client,
        (
            ("detector page", reverse("span_detectors", args=[study.pk])),
            ("one question's span page", reverse("span_item", args=[study.pk, question.pk])),
        ),
    )


def job_only(study_id: int) -> None:
    """The leaderboard job's work alone in a fresh process: its time and peak memory."""
    setup_django("portal_bench_spans")
    from analytics.spans.detectors import span_leaderboard_compute

    started = time.perf_counter()
    span_leaderboard_compute(study_id=study_id)
    print(
        f"The same job in a fresh process: {time.perf_counter() - started:.2f} s, peak memory (its own VmHWM) "
        f"{own_peak_mib():.0f} MiB"
    )


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--job-only":
        job_only(int(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=80_000)
    parser.add_argument("--length", type=int, default=900, help="mean answer length in characters")
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--detectors", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=20_000, help="answer x detector pairs timed both ways")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--database", action="store_true", help="through PostgreSQL and the pages (see above)")
    args = parser.parse_args()
    if args.database:
        through_database(args)
        return
    setup()
    from analytics.spans.detectors import detector_rows
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
