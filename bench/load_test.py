"""Load scenario: reviewers and rankers (locust, headless) against the production topology, then a check that
every submitted judgement is in the database exactly once.

Full run (docs/design.md: 50 reviewers + 30 rankers for 5 minutes), serving with gunicorn itself:
    .venv/bin/python bench/load_test.py --serve
Against a stack already running (`make stack`; seeds the database named by DATABASE_URL):
    DATABASE_URL=... .venv/bin/python bench/load_test.py --host http://127.0.0.1:8000
Short form used by the test suite: --reviewers 10 --rankers 6 --duration 15s --items 700
Issue #22's mixed load (300 reviewers + 200 physicians with people's pauses, 10 minutes):
    .venv/bin/python bench/load_test.py --serve --reviewers 300 --rankers 200 --duration 10m \
        --review-think 20 --rank-think 60
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _django import ROOT, setup_django
from _server import free_port, start_server
from bench_import import make_dataset

BIN = Path(sys.executable).parent


def seed(n_items: int, reviewers: int, rankers: int, workdir: Path) -> dict:

    from annotation.models import QAItem
    from annotation.services.imports import items_import
    from portal.api_tokens import api_token_create
    from portal.services import person_admit
    from ranking.services.outputs import outputs_import
    from ranking.services.studies import study_create

    folder = workdir / "items"
    folder.mkdir()
    make_dataset(folder, n_items)
    items_import(paths=[folder])
    tokens = {"reviewers": [], "rankers": []}
    for role, count in (("reviewer", reviewers), ("ranker", rankers)):
        for i in range(count):
            user = person_admit(email=f"load-{role}-{i}@bench.portal", institution=None, roles=[role])
            tokens[f"{role}s"].append(api_token_create(user=user, name="load test", mfa_verified=True)[1])
    items = list(QAItem.objects.filter(qa_type__in=["short_answer", "multi_hop", "short_inverse"]))
    for n, name in enumerate(("LOAD-SYSTEM-A", "LOAD-SYSTEM-B", "LOAD-SYSTEM-C")):
        path = workdir / f"{name}.jsonl"
        path.write_text(
            "".join(
                json.dumps({"item_uid": i.uid, "system": name, "response": f"{i.answer[:200]} ({n})"}) + "\n"
                for i in items
            )
        )
        outputs_import(system_name=name, paths=[path])
    study = study_create(
        name="load",
        systems=["LOAD-SYSTEM-A", "LOAD-SYSTEM-B", "LOAD-SYSTEM-C"],
        sample_size=min(1000, len(items)),
        seed=1,
        overlap=3,
    ).study
    tokens["study_id"] = study.pk
    return tokens


def serve(workers: int, threads: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    return start_server(port, workers=workers, threads=threads), f"http://127.0.0.1:{port}"


def check_exactly_once(log_path: Path) -> dict:
    """Every acknowledged submission is stored, nothing is stored twice. A submission stored but never
    acknowledged is possible only for requests in flight when the run stopped (the client vanished): it is
    stored once, and counted separately."""
    from django.db.models import Count

    from annotation.models import Review
    from ranking.models import AnswerJudgement, RankingTask

    entries = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    reviews = [int(e["key"]) for e in entries if e["kind"] == "review"]
    tasks = [e["key"] for e in entries if e["kind"] == "ranking"]
    repeats = [e["key"] for e in entries if e["kind"] == "repeat"]
    stored_reviews = set(Review.objects.filter(comment="load test").values_list("assignment_id", flat=True))
    stored_tasks = {
        str(t) for t in RankingTask.objects.filter(status=RankingTask.Status.SUBMITTED).values_list("id", flat=True)
    }
    per_task = {str(t): n for t, n in _judgement_counts(AnswerJudgement)}
    double_reviews = Review.objects.values("item_id", "stage").annotate(n=Count("id")).filter(n__gt=1).count()
    return {
        "reviews_acknowledged": len(reviews),
        "reviews_stored": len(stored_reviews),
        "reviews_missing": len(set(reviews) - stored_reviews),
        "reviews_stored_in_flight_at_stop": len(stored_reviews - set(reviews)),
        "items_with_two_reviews_in_one_stage": double_reviews,
        "rankings_acknowledged": len(tasks),
        "rankings_stored": len(stored_tasks),
        "rankings_missing": len(set(tasks) - stored_tasks),
        "rankings_stored_in_flight_at_stop": len(stored_tasks - set(tasks)),
        "rankings_with_wrong_judgement_count": sum(1 for t in stored_tasks if per_task.get(t) != 4),
        "duplicate_acknowledgements": (len(reviews) - len(set(reviews))) + (len(tasks) - len(set(tasks))),
        "requests_sent_again_after_a_dropped_connection": len(repeats),
        "first_dropped_connection": repeats[0] if repeats else "",
    }


def _judgement_counts(model):
    from django.db.models import Count

    return model.objects.values_list("task_id").annotate(n=Count("id")).values_list("task_id", "n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviewers", type=int, default=50)
    parser.add_argument("--rankers", type=int, default=30)
    parser.add_argument("--duration", default="5m")
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between a user's actions")
    parser.add_argument("--review-think", type=float, help="a reviewer's mean pause between items (default: --think)")
    parser.add_argument("--rank-think", type=float, help="a physician's mean pause between rankings (default: --think)")
    parser.add_argument("--host", default="")
    parser.add_argument("--hosts", default="", help="several web processes, comma-separated: users spread over them")
    parser.add_argument("--serve", action="store_true", help="start gunicorn on 127.0.0.1 (--workers × --threads)")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn processes with --serve (gunicorn.conf.py: 4)")
    parser.add_argument("--threads", type=int, default=4, help="threads per process with --serve (gunicorn.conf.py: 4)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = parser.parse_args()
    setup_django("portal_bench_load")
    workdir = Path(tempfile.mkdtemp(prefix="portal-load-"))
    args.out.mkdir(parents=True, exist_ok=True)
    users = seed(args.items, args.reviewers, args.rankers, workdir)
    users_path, log_path = workdir / "users.json", workdir / "submitted.jsonl"
    users_path.write_text(json.dumps(users))
    server = None
    host = args.host or args.hosts.split(",")[0]
    if args.serve or not host:
        server, host = serve(args.workers, args.threads)
    try:
        env = {
            **os.environ,
            "LOAD_USERS": str(users_path),
            "LOAD_LOG": str(log_path),
            "LOAD_THINK": str(args.think),
            "LOAD_REVIEW_THINK": str(args.review_think or ""),
            "LOAD_RANK_THINK": str(args.rank_think or ""),
            "LOAD_REVIEWERS": str(args.reviewers),
            "LOAD_RANKERS": str(args.rankers),
            "LOAD_HOSTS": args.hosts,
        }
        total = args.reviewers + args.rankers
        subprocess.run(
            [
                str(BIN / "locust"),
                "-f",
                str(ROOT / "bench" / "load" / "locustfile.py"),
                "--headless",
                "-u",
                str(total),
                "-r",
                str(max(1, total // 10)),
                "-t",
                args.duration,
                "--host",
                host,
                "--csv",
                str(args.out / "load"),
                "--only-summary",
                "--loglevel",
                "WARNING",
            ],
            env=env,
            check=False,
        )
    finally:
        if server is not None:
            server.terminate()  # gunicorn's master stops its workers on SIGTERM
            server.wait(20)
    print_report(args, check_exactly_once(log_path))


def print_report(args, check: dict) -> None:
    rows = list(csv.DictReader((args.out / "load_stats.csv").open()))
    pauses = f"reviewers pause ~{args.review_think or args.think}s, physicians ~{args.rank_think or args.think}s"
    print(f"\nLoad: {args.reviewers} reviewers + {args.rankers} rankers for {args.duration}, {pauses}")
    if args.serve or not (args.host or args.hosts):  # this script started the server
        print(f"gunicorn: {args.workers} processes x {args.threads} threads")
    print("| endpoint | requests | failures | p50 ms | p95 ms | p99 ms | req/s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(
            f"| {row['Name']} | {row['Request Count']} | {row['Failure Count']} | {row['50%']} | {row['95%']} | {row['99%']} | {float(row['Requests/s']):.1f} |"
        )
    print("\nExactly-once check:", json.dumps(check))
    in_flight = check["reviews_stored_in_flight_at_stop"] + check["rankings_stored_in_flight_at_stop"]
    ok = (
        check["reviews_missing"] == 0
        and check["rankings_missing"] == 0
        and check["duplicate_acknowledgements"] == 0
        and check["items_with_two_reviews_in_one_stage"] == 0
        and check["rankings_with_wrong_judgement_count"] == 0
        and in_flight <= args.reviewers + args.rankers
    )  # at most one request in flight per user at the stop
    print("every acknowledged judgement stored exactly once:", "yes" if ok else "NO")
    failures = sum(int(r["Failure Count"]) for r in rows if r["Name"] == "Aggregated")
    sys.exit(0 if ok and failures == 0 else 1)


if __name__ == "__main__":
    main()
