"""The full set of analytics reports from the database: 5,000 double-reviewed items, and a study of 1,000
questions × 8 answers (7 systems + the reference) × 3 rankers with 4 metric scores per answer, each statistic
with 1,000 bootstrap resamples (target: under 10 s for everything; at 10×, 50,000 items and 10,000 questions,
under 30 s).

``--nuggets``: the study also asks for nuggets: every question gets a validated list of 5 nuggets (2 vital, 2 okay, 1
avoid) and every ranker labels each nugget against each answer (8 x 5 x 3 labels a question); the study report then
includes the nugget scores (per answer), and the nugget board's job (``analytics.nuggets.board.nugget_board_compute``:
system scores with intervals, agreement, correlations) is timed on its own in a fresh process, then the nugget pages
reading the stored board.

``--judges N``: N automatic judges' scores of every answer are imported too (noisy copies of the systems'
quality, with probabilities, a model family, declines and pairwise verdicts), so the study report includes the
judges' meta-evaluation (acc_eq with tie calibration, tau-b and tau-c, the permutation clusters, each physician and
judge against the other physicians), the prediction-powered estimates and every section of the judge cards.

Run: .venv/bin/python bench/bench_reports.py [--items 5000] [--questions 1000] [--resamples 1000] [--nuggets]
     [--judges 2]
The rows are written with bulk inserts first (not timed); then the two report jobs' work is timed, including
reading the rows back from PostgreSQL, and the process's peak memory (ru_maxrss) is printed after seeding and
after the reports; then both jobs are run again side by side in two processes, as the documented Celery worker
(``--concurrency 2``) runs them, and the wall time of the pair is printed. Every answer's text is the same word, so the style-controlled leaderboard has no style
difference to fit (its cost with real answers grows with the number of distinct comparisons).
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from _django import own_peak_mib, setup_django
from _pages import time_pages
from bench_import import make_dataset


def seed_reviews(n_items: int, rng: random.Random) -> None:
    from django.utils import timezone

    from annotation.models import Assignment, QAItem, Review
    from portal.services import person_admit

    people = [person_admit(email=f"rev{i}@bench.portal", institution=None, roles=["reviewer"]) for i in range(20)]
    items = list(QAItem.objects.order_by("id")[:n_items])
    now = timezone.now()
    assignments, reviews = [], []
    for item in items:
        first, second = rng.sample(people, 2)
        verdict = rng.choices(["correct", "incorrect", "cannot_tell"], [0.8, 0.15, 0.05])[0]
        relevance = rng.randint(2, 5)
        for who, stage in ((first, "primary"), (second, "secondary")):
            agree = rng.random() < 0.85
            assignments.append(
                Assignment(item=item, reviewer=who, stage=stage, status="done", expires_at=now + timedelta(hours=1))
            )
            reviews.append(
                (
                    who,
                    stage,
                    item,
                    verdict if agree else rng.choice(["correct", "incorrect"]),
                    max(1, min(5, relevance + (0 if agree else rng.choice([-1, 1])))),
                )
            )
    Assignment.objects.bulk_create(assignments, batch_size=5000)
    Review.objects.bulk_create(
        [
            Review(
                assignment=a,
                item=item,
                reviewer=who,
                stage=stage,
                verdict=verdict,
                relevance=rel,
                server_seconds=rng.uniform(20, 90),
            )
            for a, (who, stage, item, verdict, rel) in zip(assignments, reviews, strict=True)
        ],
        batch_size=5000,
    )


def seed_study(n_questions: int, rng: random.Random):
    from django.utils import timezone

    from analytics.models import AnswerScore, ScoringRun
    from annotation.models import QAItem
    from portal.services import person_admit
    from ranking.models import AnswerJudgement, RankingTask, Study, StudyAnswer, StudyQuestion, System

    systems = [System.objects.create(name=f"bench-system-{i}") for i in range(7)]
    reference = System.objects.create(name="reference", is_reference=True)
    quality = {s.pk: rng.uniform(-1, 1) for s in systems} | {reference.pk: 1.5}
    study = Study.objects.create(name="bench study", seed=1, overlap=3)
    study.systems.set(systems)
    items = list(QAItem.objects.order_by("id")[:n_questions])
    questions = StudyQuestion.objects.bulk_create(
        [StudyQuestion(study=study, item=item, position=i) for i, item in enumerate(items)]
    )
    answers = StudyAnswer.objects.bulk_create(
        [StudyAnswer(question=q, system=s, text="answer") for q in questions for s in [*systems, reference]],
        batch_size=5000,
    )
    by_question: dict[int, list] = {}
    for answer in answers:
        by_question.setdefault(answer.question_id, []).append(answer)
    rankers = [person_admit(email=f"rank{i}@bench.portal", institution=None, roles=["ranker"]) for i in range(10)]
    now = timezone.now()
    tasks, judgements = [], []
    for question in questions:
        for ranker in rng.sample(rankers, 3):
            order = by_question[question.pk][:]
            rng.shuffle(order)
            task = RankingTask(
                study=study,
                question=question,
                ranker=ranker,
                seed="bench",
                order=[a.pk for a in order],
                status="submitted",
                lease_expires_at=now,
                submitted_at=now,
            )
            tasks.append(task)
            noisy = sorted(order, key=lambda a: -(quality[a.system_id] + rng.gauss(0, 0.8)))
            rank = {a.pk: r for r, a in enumerate(noisy, 1)}
            judgements.extend((task, a, chr(65 + pos), pos + 1, rank[a.pk]) for pos, a in enumerate(order))
    RankingTask.objects.bulk_create(tasks, batch_size=5000)
    AnswerJudgement.objects.bulk_create(
        [
            AnswerJudgement(
                task=t, answer=a, slot=slot, position=pos, rank=r, tag=["good", "okay", "bad"][min(2, (r - 1) // 3)]
            )
            for t, a, slot, pos, r in judgements
        ],
        batch_size=5000,
    )
    for system in systems:
        run = ScoringRun.objects.create(system=system, finished_at=now)
        AnswerScore.objects.bulk_create(
            [
                AnswerScore(
                    run=run,
                    item=item,
                    qa_type=item.qa_type,
                    index=i,
                    semantic=min(1, max(0, 0.4 + 0.2 * quality[system.pk] + rng.gauss(0, 0.15))),
                    bleu=rng.random() * 0.3,
                    rouge=rng.random() * 0.6,
                    meteor=rng.random() * 0.5,
                )
                for i, item in enumerate(items)
            ],
            batch_size=5000,
        )
    return study


def seed_judges(study, n_judges: int, rng: random.Random) -> int:
    """``n_judges`` judges' scores of every answer of ``study`` (the answer's system quality plus noise, as an
    imported judge's file would give them), each with a probability and the judge's model family (that of one
    system), one answer in a hundred declined, and a pairwise verdict on two systems' answers to every question in
    both orders: every section of the judge cards has its full work. Returns the number of scores."""
    import math

    from analytics.models import JudgeAbstention, JudgeScore, JudgeVerdict
    from ranking.models import StudyAnswer, System

    answers = list(StudyAnswer.objects.filter(question__study=study).values_list("pk", "system__name", "question_id"))
    quality = {name: rng.uniform(0, 1) for name in {name for _, name, _ in answers}}
    family_system = min(name for name in quality if name != "reference")
    System.objects.filter(name=family_system).update(family="bench family")
    scores, declines = [], []
    for j in range(n_judges):
        for pk, name, _ in answers:
            if rng.random() < 0.01:
                declines.append(JudgeAbstention(answer_id=pk, judge=f"bench-judge-{j}"))
                continue
            score = quality[name] + rng.gauss(0, 0.5)
            scores.append(
                JudgeScore(
                    answer_id=pk,
                    judge=f"bench-judge-{j}",
                    score=score,
                    probability=1 / (1 + math.exp(-4 * (score - 0.5))),
                    judge_family="bench family",
                )
            )
    JudgeScore.objects.bulk_create(scores, batch_size=5000)
    JudgeAbstention.objects.bulk_create(declines, batch_size=5000)
    by_question: dict[int, dict[str, int]] = {}
    for pk, name, question in answers:
        by_question.setdefault(question, {})[name] = pk
    first, second = sorted(name for name in quality if name != "reference")[:2]
    verdicts = [
        JudgeVerdict(question_id=question, judge=f"bench-judge-{j}", first_id=a, second_id=b, verdict=verdict)
        for j in range(n_judges)
        for question, pks in by_question.items()
        for a, b in ((pks[first], pks[second]), (pks[second], pks[first]))
        for verdict in [rng.choice(["first", "first", "second", "tie"])]
    ]
    JudgeVerdict.objects.bulk_create(verdicts, batch_size=5000)
    return len(scores)


def seed_nuggets(study, rng: random.Random) -> int:
    """A validated 5-nugget list on every question of ``study`` and every ranker's label of every nugget against
    every answer of their task; returns the number of labels."""
    from annotation.models import Nugget, NuggetSet
    from ranking.models import NuggetJudgement, RankingTask, StudyQuestion

    questions = list(StudyQuestion.objects.filter(study=study).order_by("position"))
    sets = NuggetSet.objects.bulk_create(
        [NuggetSet(item_id=q.item_id, version=1, status="validated", origin="imported") for q in questions],
        batch_size=5000,
    )
    importances = ["vital", "vital", "okay", "okay", "avoid"]
    nuggets = Nugget.objects.bulk_create(
        [
            Nugget(nugget_set=s, position=i, key=f"n{i}", text=f"fact {i}", importance=importance)
            for s in sets
            for i, importance in enumerate(importances, 1)
        ],
        batch_size=5000,
    )
    by_set: dict[int, list] = {}
    for nugget in nuggets:
        by_set.setdefault(nugget.nugget_set_id, []).append(nugget)
    for question, nugget_set in zip(questions, sets, strict=True):
        question.nugget_set = nugget_set
    StudyQuestion.objects.bulk_update(questions, ["nugget_set"], batch_size=5000)
    study.ask_nuggets = True
    study.save(update_fields=["ask_nuggets"])
    set_of = {q.pk: s.pk for q, s in zip(questions, sets, strict=True)}
    labels = ["support", "partial", "not_support"]
    count = 0
    batch = []
    for task in RankingTask.objects.filter(study=study).only("pk", "question_id", "order").iterator():
        for answer_id in task.order:
            for nugget in by_set[set_of[task.question_id]]:
                batch.append(
                    NuggetJudgement(task_id=task.pk, answer_id=answer_id, nugget=nugget, label=rng.choice(labels))
                )
        if len(batch) >= 20000:
            NuggetJudgement.objects.bulk_create(batch, batch_size=5000)
            count, batch = count + len(batch), []
    NuggetJudgement.objects.bulk_create(batch, batch_size=5000)
    return count + len(batch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--nuggets", action="store_true", help="the study asks for nuggets too (see above)")
    parser.add_argument("--judges", type=int, default=0, help="import this many judges' scores (see above)")
    args = parser.parse_args()
    setup_django("portal_bench_reports")
    from analytics.services.reports import report_study, report_vetting_agreement
    from annotation.services.imports import items_import

    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        make_dataset(Path(tmp), max(args.items, args.questions))
        items_import(paths=[Path(tmp)])
    seeding = time.perf_counter()
    seed_reviews(args.items, rng)
    study = seed_study(args.questions, rng)
    if args.nuggets:
        print(f"seeded {seed_nuggets(study, rng)} nugget labels (5 nuggets x 8 answers x 3 rankers a question)")
    if args.judges:
        print(f"seeded {seed_judges(study, args.judges, rng)} judge scores ({args.judges} judges, every answer)")
    print(f"seeded {args.items} double-reviewed items and {args.questions} questions in "
          f"{time.perf_counter() - seeding:.0f} s (not timed below)")  # fmt: skip
    rss_seeded = _peak_rss_mib()

    started = time.perf_counter()
    vetting = report_vetting_agreement(n_resamples=args.resamples)
    mid = time.perf_counter()
    result = report_study(study_id=study.pk, n_resamples=args.resamples)
    done = time.perf_counter()
    assert vetting["overall"]["n_items"] == args.items and result["n_questions"] == args.questions
    print(f"vetting agreement (overall + 7 types + {len(vetting['pairs'])} reviewer pairs): {mid - started:.2f} s")
    judged = f", {args.judges} judges" if args.judges else ""
    print(f"study report (W, tau, tag alpha, BT leaderboard, 4 metrics × correlations{judged}): {done - mid:.2f} s")
    target = 10 if args.items <= 5000 and args.questions <= 1000 else 30
    print(f"all reports, {args.resamples} resamples each: {done - started:.2f} s   (target < {target} s)")
    print(f"peak memory (ru_maxrss): {rss_seeded:.0f} MiB after seeding, {_peak_rss_mib():.0f} MiB after the reports")
    both = _both_at_once(study.pk, args.resamples)
    print(f"both report jobs at once, one process each (the worker's --concurrency 2): {both:.2f} s wall, "
          f"peak memory of a job {_peak_rss_mib(resource.RUSAGE_CHILDREN):.0f} MiB")  # fmt: skip
    if args.nuggets:  # after the pair: its fresh process would count in the pair's peak memory otherwise
        _nugget_board(study)
    print(
        f"check: verdict alpha {vetting['overall']['verdict']['krippendorff_alpha']['value']:.3f}, "
        f"Kendall W {result['ranking_agreement']['kendall_w']['value']:.3f}, "
        f"semantic segment tau-b {result['correlation']['semantic']['segment_tau_b']['value']:.3f}"
    )


def _nugget_board(study) -> None:
    """The nugget board's job in a fresh process (as a worker runs it: its time and peak memory), then the nugget
    pages an organizer opens, reading the stored board: 10 requests each, median and slowest."""
    import subprocess
    import sys

    from django.conf import settings
    from django.test import Client
    from django.urls import reverse

    from portal.services import person_admit

    for flag in ("--nugget-job", "--nugget-export"):
        child = subprocess.run(
            [sys.executable, __file__, flag, str(study.pk)], capture_output=True, text=True, check=True
        )
        print(child.stdout.strip())
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    client = Client()
    client.force_login(person_admit(email="organizer@bench.portal", institution=None, roles=["organizer"]))
    question = study.questions.order_by("position").first()
    board = reverse("nugget_leaderboard", args=[study.pk])
    pages = (
        ("leaderboard page", board),
        ("its plot (SVG)", reverse("nugget_plot", args=[study.pk, "svg"])),
        ("its CSV", board + "?format=csv"),
        ("one item's page", reverse("nugget_item", args=[study.pk, question.pk])),
    )
    time_pages(client, pages, prefix="nugget pages, ")


def nugget_job_only(study_id: int) -> None:
    """The nugget board's job alone in a fresh process: its time and peak memory."""
    setup_django("portal_bench_reports")
    from analytics.nuggets.board import nugget_board_compute

    started = time.perf_counter()
    stored = nugget_board_compute(study_id=study_id)
    print(
        f"nugget board job (scores, 1000 resamples, agreement, correlations; reading the labels included), in a "
        f"fresh process: {time.perf_counter() - started:.2f} s for {stored.result['n_answers']} answers; peak memory "
        f"(its own VmHWM) {own_peak_mib():.0f} MiB"
    )


def nugget_export_only(study_id: int) -> None:
    """The study's nugget label download (JSONL) alone in a fresh process, consumed as the web server sends it:
    chunk by chunk, none kept (time to the first chunk, to the last, and the peak memory)."""
    setup_django("portal_bench_reports")
    from ranking.models import Study
    from ranking.services.nugget_exports import nugget_export_chunks

    started = time.perf_counter()
    first = None
    size = 0
    for chunk in nugget_export_chunks(study=Study.objects.get(pk=study_id), fmt="nugget-labels"):
        first = first or time.perf_counter() - started
        size += len(chunk)
    print(
        f"nugget label download (JSONL, streamed), in a fresh process: first bytes after {first or 0:.2f} s, all "
        f"{size / 2**20:.0f} MiB after {time.perf_counter() - started:.2f} s; peak memory (its own VmHWM) "
        f"{own_peak_mib():.0f} MiB"
    )


def _peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


def _both_at_once(study_id: int, resamples: int) -> float:
    """Wall time of the two report jobs run side by side in two processes, as a Celery worker with two
    processes runs them; the bootstrap's cached resamples are dropped first, so neither job starts warm."""
    import multiprocessing

    from django.db import connections

    from analytics.services.reports import report_study, report_vetting_agreement
    from stats import bootstrap

    bootstrap.clear_cache()
    connections.close_all()  # each process opens its own connection
    jobs = [
        lambda: report_vetting_agreement(n_resamples=resamples),
        lambda: report_study(study_id=study_id, n_resamples=resamples),
    ]
    fork = multiprocessing.get_context("fork")
    started = time.perf_counter()
    processes = [fork.Process(target=job) for job in jobs]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    assert all(process.exitcode == 0 for process in processes)
    return time.perf_counter() - started


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 3 and sys.argv[1] == "--nugget-job":
        nugget_job_only(int(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--nugget-export":
        nugget_export_only(int(sys.argv[2]))
    else:
        main()
