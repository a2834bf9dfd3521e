"""What PostgreSQL spends on the review loop's two hottest statements: planning against running, and what preparing
them saves (issue #22, capacity).

For the review queue's candidate statement ("next") and the token look-up (every API request), over a fresh bench
database: EXPLAIN ANALYZE's planning and execution times as Django sends them (bound on the client, planned on every
run), then the time per run (sent, run, rows read) through ``portal.prepared.prepared_cursor`` once psycopg has
prepared the statement, against the same runs through a client-bound cursor, alternating. Times are medians over
``--runs``.

Run: .venv/bin/python bench/bench_statements.py [--items 40000] [--runs 200]
"""

from __future__ import annotations

import argparse
import statistics
import time

from _django import setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    setup_django("portal_bench_statements")
    from bench_review import prepare

    tokens = prepare(args.items, 20)

    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.models import ImportBatch
    from annotation.services.queue import _sql as queue_sql
    from annotation.workflow import queue_start
    from portal.authentication import _sql as token_sql
    from portal.models import ApiToken, User
    from portal.prepared import prepared_cursor

    reviewer = User.objects.filter(email="bench-reviewer-0@bench.portal").get()
    batches = list(ImportBatch.objects.values_list("id", flat=True))

    def candidate_params(run: int) -> dict:
        return {
            "batches": batches,
            "qa_type": "",
            "tried": [],
            "reviewer": reviewer.pk,
            "now": timezone.now(),
            "start": queue_start(seed=f"run-{run}", reviewer_id=reviewer.pk),
        }

    statements = {
        "queue candidate (every next)": (queue_sql()["candidate"], candidate_params),
        "token look-up (every API call)": (token_sql(), lambda run: [ApiToken.hash_of(tokens[run % len(tokens)])]),
    }
    print(f"# {args.items} items, median of {args.runs} runs each, times in ms")
    print("| statement | planning (EXPLAIN) | execution (EXPLAIN) | per run, client-bound | per run, prepared |")
    print("| --- | --- | --- | --- | --- |")
    for name, (sql, params_of) in statements.items():
        planning, execution = [], []
        for run in range(args.runs):
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params_of(run))
                plan = cursor.fetchone()[0][0]
                transaction.set_rollback(True)  # the candidate locks its row
            planning.append(plan["Planning Time"])
            execution.append(plan["Execution Time"])
        client, prepared = [], []
        for run in range(args.runs + 10):
            for cursor_of, times in ((connection.cursor, client), (prepared_cursor, prepared)):
                params = params_of(run)
                # Committed, not rolled back: psycopg forgets every prepared statement of a connection on a ROLLBACK
                # (the candidate's row lock ends with the commit; the statement writes nothing).
                with transaction.atomic(), cursor_of() as cursor:
                    start = time.perf_counter()
                    cursor.execute(sql, params)
                    cursor.fetchall()
                    elapsed = time.perf_counter() - start
                if run >= 10:  # past psycopg's threshold and PostgreSQL's first custom plans
                    times.append(elapsed * 1000)
        print(
            f"| {name} | {statistics.median(planning):.3f} | {statistics.median(execution):.3f} "
            f"| {statistics.median(client):.3f} | {statistics.median(prepared):.3f} |"
        )


if __name__ == "__main__":
    main()
