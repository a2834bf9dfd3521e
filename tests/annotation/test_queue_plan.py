"""The queue's candidate statement is prepared once per connection (portal.prepared), so PostgreSQL keeps the plan it
made after a few runs. A plan made while the lease table was small (a new deployment, the first minutes of a vetting
round) scanned the whole lease table for every item it looked at; it stayed cached while the table grew, and each
"next" then cost PostgreSQL milliseconds (bench_capacity.py --pg-statements: 83 % of PostgreSQL's time per review in
the first minute of a run). The lease's transaction therefore plans without sequential scans, and the candidate's checks are written so that
they stay look-ups by the item's id: the lease look-ups are index look-ups of the item's own leases whatever the
table's size when the plan was made."""

from __future__ import annotations

import re

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotation.models import Assignment, ImportBatch, ItemExposure
from annotation.services.queue import _sql, assignment_next, queue_start
from portal.models import User

# "next" in a transaction of its own, as every request runs it: the planner settings are not put on a caller's.
pytestmark = pytest.mark.django_db(transaction=True)


def _cached_candidate_plan(reviewer: User) -> str:
    """The plan the connection has cached for the candidate statement, run as "next" would run it."""
    sql = _sql()["candidate"]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name, generic_plans FROM pg_prepared_statements WHERE statement LIKE %s", [sql[:60] + "%"]
        )
        name, generic_plans = cursor.fetchone()
    assert generic_plans > 0  # PostgreSQL settled on its generic plan: the one kept for every later "next"
    params = {
        "batches": list(ImportBatch.objects.values_list("id", flat=True)),
        "qa_type": "",
        "tried": [],
        "reviewer": reviewer.pk,
        "now": timezone.now(),
        "start": queue_start(seed="test-seed", reviewer_id=reviewer.pk),
    }
    order = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", sql)))  # psycopg numbers them by first appearance
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN EXECUTE {name}({', '.join(['%s'] * len(order))})", [params[k] for k in order])
        plan = "\n".join(line for (line,) in cursor.fetchall())
        transaction.set_rollback(True)
    return plan


def test_the_cached_candidate_plan_looks_leases_up_by_index_after_the_lease_table_grows(
    sample_items, config, make_user
):
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Assignment._meta.db_table}")  # as autovacuum leaves an empty table: 0 rows
    reviewers = [make_user("reviewer") for _ in range(14)]
    for reviewer in reviewers[:12]:  # prepared after 5 runs; PostgreSQL's generic plan after 5 more
        assert assignment_next(reviewer=reviewer) is not None
    others = User.objects.bulk_create(User(email=f"other{n}@test.portal") for n in range(80))
    Assignment.objects.bulk_create(  # the lease table grows past a page: leases long over, on every item
        Assignment(
            item=item, reviewer=other, stage="primary", status=Assignment.Status.RELEASED, expires_at=timezone.now()
        )
        for other in others
        for item in sample_items
    )
    plan = _cached_candidate_plan(reviewers[12])
    assert "Seq Scan on annotation_assignment" not in plan, plan
    # The blinding rule's other look-up (items whose reviews the reviewer read) is by the item's id too.
    assert f"Index Only Scan using item_exposure_once_per_kind on {ItemExposure._meta.db_table}" in plan, plan
    # Each check is a look-up by the item's id, run per item (a subplan), never a join: planned while the lease table
    # was empty, an anti-join read every second-review lease (or every lease of the reviewer) for each item it
    # walked past, through an index that needs no item id, which cost as much as the scan above.
    assert "Anti Join" not in plan, plan
    assert assignment_next(reviewer=reviewers[13]) is not None
