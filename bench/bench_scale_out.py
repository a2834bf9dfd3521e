"""Scale out (issue #22 target 5): two web processes on different ports and two Celery workers against one
PostgreSQL, driven together by the locust mixed load, while one large scoring submission is scored in slices
across the two workers; then the same submission scored again in slices on a quiet machine and in one process.

Prints the load table and the exactly-once check (bench/load_test.py, users spread over both web processes), the
scoring times (split under load, split quiet, one process quiet; processes that have loaded the model, no text of
the submission seen before) and the parity of the split runs with the one-process run (max |difference| of any stored score).

    .venv/bin/python bench/bench_scale_out.py                          # default: about 3 minutes
    .venv/bin/python bench/bench_scale_out.py --items 4000 --answers 4000 --slice-items 250 --duration 90s

The embedding store is off (METRIC_EMBEDDING_STORE=0) so that no run reads vectors another one encoded.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _django import ROOT
from _server import free_port, start_server

BIN = Path(sys.executable).parent
FLOAT_FIELDS = ("semantic", "word", "sentence", "paragraph", "bleu", "rouge", "meteor", "precision", "recall", "f1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1400, help="items seeded (the load test's)")
    parser.add_argument("--answers", type=int, default=1400, help="answers of the scored submission (≤ items)")
    parser.add_argument("--slice-items", type=int, default=100, help="open-ended answers per slice task")
    parser.add_argument("--reviewers", type=int, default=40)
    parser.add_argument("--rankers", type=int, default=20)
    parser.add_argument("--think", type=float, default=1.0)
    parser.add_argument("--duration", default="45s")
    parser.add_argument("--web-workers", type=int, default=2, help="gunicorn workers per web process")
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="portal-scale-out-"))
    os.environ.update(METRIC_EMBEDDING_STORE="0", METRIC_SLICE_ITEMS=str(args.slice_items), OMP_NUM_THREADS="1")
    sys.path.insert(0, str(ROOT))
    from tests.e2e.conftest import WorkerProcess, start_redis, test_database_url, wait_until

    redis, broker = start_redis(workdir)
    os.environ["CELERY_BROKER_URL"] = broker
    from _django import setup_django

    setup_django("portal_bench_scale_out")
    from config.celery import app

    app.conf.update(broker_url=broker, task_always_eager=False)
    os.environ["DATABASE_URL"] = test_database_url()  # every process below: this one PostgreSQL

    webs, workers, load = [], [], None
    try:
        ports = [free_port(), free_port()]
        webs = [start_server(port, args.web_workers, args.threads) for port in ports]
        workers = [WorkerProcess(broker, workdir / f"worker-{i}.log").start() for i in range(2)]
        hosts = ",".join(f"http://127.0.0.1:{port}" for port in ports)
        print(f"web processes: {hosts} ({args.web_workers} workers × {args.threads} threads each); 2 Celery workers")
        load = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "bench" / "load_test.py"),
                "--hosts",
                hosts,
                "--items",
                str(args.items),
                "--reviewers",
                str(args.reviewers),
                "--rankers",
                str(args.rankers),
                "--think",
                str(args.think),
                "--duration",
                args.duration,
                "--out",
                str(workdir / "load"),
            ],  # fmt: skip
            cwd=ROOT,
        )
        from annotation.models import QAItem
        from ranking.models import Study

        wait_until(lambda: Study.objects.filter(name="load").exists(), 600, 0.5, "the load test's seed")
        system = seed_submission("SCALE-OUT", QAItem.objects.order_by("pk")[: args.answers], workdir)
        warm = seed_submission("WARM-UP", QAItem.objects.order_by("-pk")[:14], workdir)
        warm_up(warm, workers)
        under_load = score_on_workers(system, workers)
        load_rc = load.wait()
        load = None

        for worker in workers:  # fresh worker processes: nothing of the first run in memory
            worker.stop()
        workers = [WorkerProcess(broker, workdir / f"worker-{i}-quiet.log").start() for i in range(2)]
        warm_up(warm, workers)
        quiet = score_on_workers(system, workers)
        score_in_this_process(warm)  # the model and the NLTK data loaded, as in the workers
        single = score_in_this_process(system)
        report(args, under_load, quiet, single)
        sys.exit(load_rc)
    finally:
        if load is not None:
            load.terminate()
            load.wait(30)
        for worker in workers:
            worker.stop()
        for web in webs:
            web.terminate()
            web.wait(30)
        redis.terminate()
        redis.wait(10)


def seed_submission(name: str, items, workdir: Path):
    """A system answering ``items``: distinct, imperfect answers (the gold text plus the system's name and the
    item's id for open types, the right option for closed ones)."""
    from ranking.models import System
    from ranking.services.outputs import outputs_import

    lines = []
    for item in items:
        response = {
            "multiple_choice": item.correct_answer,
            "list": ", ".join(item.answer_list),
            "true_false": item.answer,
            "short_inverse": f"{item.incorrect_explanation} ({name} {item.uid})",
        }.get(item.qa_type, f"{item.answer} ({name} {item.uid})")
        lines.append(json.dumps({"item_uid": item.uid, "system": name, "response": response}))
    path = workdir / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    outputs_import(system_name=name, paths=[path])
    return System.objects.get(name=name)


def warm_up(system, workers) -> None:
    """One small job per worker, so that each has loaded the model and the NLTK data (as a worker that has run
    before has): the timings that follow are scoring, not start-up."""
    from analytics.models import ScoringRun
    from analytics.tasks import scoring_task
    from portal.jobs import job_create
    from portal.models import Job
    from tests.e2e.conftest import wait_until

    jobs = []
    for _ in workers:
        run = ScoringRun.objects.create(system=system)
        run.job = job_create(kind="scoring", params={"run_id": run.pk})
        run.save()
        jobs.append(run.job_id)
        scoring_task.delay(str(run.job_id))
    wait_until(lambda: Job.objects.filter(pk__in=jobs, status="succeeded").count() == len(jobs), 600, 0.2, "warm-up")


def score_on_workers(system, workers) -> dict:
    """Queue a scoring job to the workers and wait for it; its run, wall time, slices and which worker ran them
    (counted in the workers' logs since they started)."""
    from analytics.models import ScoringRun
    from analytics.tasks import scoring_task
    from portal.jobs import job_create
    from portal.models import Job
    from tests.e2e.conftest import wait_until

    run = ScoringRun.objects.create(system=system)
    run.job = job_create(kind="scoring", params={"run_id": run.pk})
    run.save()
    started = time.perf_counter()
    scoring_task.delay(str(run.job_id))
    job = wait_until(
        lambda: Job.objects.filter(pk=run.job_id, status__in=["succeeded", "failed"]).first(), 1800, 0.2, "scoring"
    )
    seconds = time.perf_counter() - started
    if job.status != "succeeded":
        for worker in workers:
            print(worker.log()[-3000:])
        raise SystemExit(f"the split scoring job failed: {job.error}")
    per_worker = [
        sum(1 for line in worker.log().splitlines() if "scoring_slice_task[" in line and "succeeded" in line)
        for worker in workers
    ]
    return {"run": run, "seconds": seconds, "slices": run.slices.count(), "per_worker": per_worker}


def score_in_this_process(system) -> dict:
    """The same submission scored in this process in one piece (model loading included, as in a fresh worker)."""
    from analytics.models import ScoringRun
    from analytics.scoring.runs import scoring_run_execute

    run = ScoringRun.objects.create(system=system)
    started = time.perf_counter()
    scoring_run_execute(run=run)
    return {"run": run, "seconds": time.perf_counter() - started, "slices": 0}


def max_difference(a, b) -> float:
    """The largest |difference| of any stored score of two runs (over the same answers), inf if they differ
    in which answers or which fields have a value."""
    from analytics.models import AnswerScore

    def rows(run):
        fields = ("item_id", "correct", "predicted_step", "step_distance", *FLOAT_FIELDS)
        return {r[0]: r[1:] for r in AnswerScore.objects.filter(run=run).values_list(*fields)}

    left, right = rows(a), rows(b)
    if left.keys() != right.keys():
        return math.inf
    worst = 0.0
    for key, row in left.items():
        for x, y in zip(row, right[key], strict=True):
            if (x is None) != (y is None) or (isinstance(x, bool) and x != y):
                return math.inf
            if x is not None:
                worst = max(worst, abs(x - y))
    return worst


def summary_difference(a: dict, b: dict) -> float:
    numbers = lambda d: {k: v for k, v in d.items() if isinstance(v, int | float) and not isinstance(v, bool)}  # noqa: E731
    na, nb = numbers(a), numbers(b)
    return math.inf if na.keys() != nb.keys() else max((abs(na[k] - nb[k]) for k in na), default=0.0)


def report(args, under_load: dict, quiet: dict, single: dict) -> None:
    base = single["run"]
    base.refresh_from_db()
    open_answers = sum(1 for row in base.scores.values_list("semantic", flat=True) if row is not None)
    print(f"\nScoring one submission of {base.n_items} answers ({open_answers} open-ended with a semantic score), "
          f"slices of {args.slice_items} open-ended answers")  # fmt: skip
    print("| run | slices (per worker) | wall s | speed-up vs one process | max abs diff of any score | max abs diff "
          "of the summary |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- |")
    for name, entry in (("2 workers, under the load above", under_load), ("2 workers, after the load test", quiet)):
        entry["run"].refresh_from_db()
        print(f"| {name} | {entry['slices']} ({' + '.join(str(n) for n in entry['per_worker'])}) | "
              f"{entry['seconds']:.1f} | {single['seconds'] / entry['seconds']:.2f}x | "
              f"{max_difference(entry['run'], base):.1e} | "
              f"{summary_difference(entry['run'].summary, base.summary):.1e} |")  # fmt: skip
    print(f"| 1 process, after the load test | - | {single['seconds']:.1f} | 1.00x | 0 | 0 |")


if __name__ == "__main__":
    main()
