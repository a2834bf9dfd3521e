"""Time the reliability fit as the portal runs it, from the database: ``annotation.services.reliability``'s
``reliability_fit`` (read every judgement, fit Dawid–Skene, store each reviewer's figures overall and per QA type,
set the adaptive threshold) over ``--items`` items with ``--per-item`` reviews each on average.

Data (seeded): the items imported as in ``bench_import.py``; ``--reviewers`` reviewers of accuracies between 0.6 and
0.97; every item reviewed once and a share ``--per-item - 1`` a second time by another reviewer, the leases and
reviews written straight into their tables with one statement each (the bench measures the fit, not the review
path). Prints the seconds of the fit (the job's work: read, fit, store) and the process's peak memory.

Run: .venv/bin/python bench/bench_reliability_job.py [--items 200000] [--per-item 1.5] [--reviewers 30]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from _django import ROOT, own_peak_mib, setup_django

sys.path.insert(0, str(ROOT / "bench"))


def reviews_sql(stage: str, *, offset: int, where: str = "TRUE") -> str:
    """One lease and review per chosen item, by the reviewer the item's id (plus ``offset``) picks: verdicts right
    with the reviewer's accuracy against a truth that is "incorrect" for one item in ten."""
    return f"""
WITH chosen AS (
    SELECT i.id AS item_id, r.id AS reviewer_id, r.accuracy,
           (hashtext(i.uid || ':truth') & 1023) < 102 AS wrong,
           (hashtext(i.uid || ':{stage}') & 1023) / 1024.0 AS draw
    FROM annotation_qaitem i
    JOIN bench_reviewers r ON r.n = ((i.id + {offset}) %% %(reviewers)s)
    WHERE {where}
), leased AS (
    INSERT INTO annotation_assignment (item_id, reviewer_id, stage, status, idempotency_key, created_at, expires_at,
                                       finished_at)
    SELECT item_id, reviewer_id, '{stage}', 'submitted', gen_random_uuid(), now(), now(), now() FROM chosen
    RETURNING id, item_id, reviewer_id
)
INSERT INTO annotation_review (assignment_id, item_id, reviewer_id, stage, verdict, cannot_tell_reason, relevance,
                               comment, server_seconds, created_at)
SELECT l.id, l.item_id, l.reviewer_id, '{stage}',
       CASE WHEN (c.draw < c.accuracy) <> c.wrong THEN 'correct' ELSE 'incorrect' END, '', 4, '', 30, now()
FROM leased l JOIN chosen c ON c.item_id = l.item_id
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--per-item", type=float, default=1.5)
    parser.add_argument("--reviewers", type=int, default=30)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    setup_django("portal_bench_reliability")
    import numpy as np
    from bench_import import make_dataset
    from django.db import connection

    from annotation.services.imports import items_import
    from annotation.services.reliability import reliability_fit
    from portal.services import person_admit

    with tempfile.TemporaryDirectory() as tmp:
        make_dataset(Path(tmp), args.items)
        items_import(paths=[Path(tmp)])
    rng = np.random.default_rng(args.seed)
    people = [
        person_admit(email=f"bench-reviewer-{n}@bench.portal", institution=None, roles=["reviewer"]).pk
        for n in range(args.reviewers)
    ]
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE bench_reviewers (n int, id bigint, accuracy float)")
        for n, person in enumerate(people):
            cursor.execute("INSERT INTO bench_reviewers VALUES (%s, %s, %s)", [n, person, rng.uniform(0.6, 0.97)])
        cursor.execute(reviews_sql("primary", offset=0), {"reviewers": args.reviewers})
        again = int(1024 * (args.per_item - 1))
        where = f"(hashtext(i.uid || ':again') & 1023) < {again}"
        cursor.execute(reviews_sql("secondary", offset=1, where=where), {"reviewers": args.reviewers})
        cursor.execute("SELECT count(*) FROM annotation_review")
        (labels,) = cursor.fetchone()
        cursor.execute("VACUUM (ANALYZE)")
    print(f"{args.items:,} items, {labels:,} reviews by {args.reviewers} reviewers")
    started = time.perf_counter()
    fit = reliability_fit()
    seconds = time.perf_counter() - started
    assert fit is not None and fit.n_labels == labels
    print(
        f"reliability fit (read, fit, store) in {seconds:.2f} s: {fit.iterations} iterations, "
        f"{fit.reviewers.count():,} reviewer rows, adaptive threshold {fit.adaptive_threshold:.3f}; "
        f"peak resident memory {own_peak_mib():.0f} MiB"
    )


if __name__ == "__main__":
    main()
