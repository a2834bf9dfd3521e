"""The audit trail of access: what recording one entry costs a request, and the organizers' page over 10 million.

1. ``portal.audit.audit_access`` as a sign-in calls it (the client's address read from the request), one INSERT
   each, committed without waiting for the flush to disk, ``--writes`` times: p50 / p95 / p99. Target: p95 < 1 ms.
2. ``--rows`` generated entries (one INSERT … SELECT generate_series: 400 days, ``--people`` actors, the access
   actions and the exports' own), then the page (``/organize/audit/``, through Django's test client as an
   organizer's browser asks for it) unfiltered, by person, by action, by days, all at once, and a later page.
   Target: every page < 200 ms. The generated rows are deleted afterwards.

Run: .venv/bin/python bench/bench_audit.py [--writes 5000] [--rows 10000000] [--people 500]
"""

from __future__ import annotations

import argparse
import time

from _django import setup_django
from _pages import time_pages
from _server import percentile

GENERATED = "bench.generated"
ACTIONS = [
    "login", "login", "login", "identities_viewed", "identities_viewed", "export_download", "login_refused",
    "rankings_exported", "judgements_exported", "person_updated", "api_token_created", "review_created",
]  # fmt: skip


def time_writes(n: int) -> None:
    from django.db import transaction
    from django.test import RequestFactory

    from portal.audit import audit_access
    from portal.models import User

    person = User.objects.create(email="writer@bench.portal")
    request = RequestFactory().post("/accounts/login/", REMOTE_ADDR="203.0.113.7")
    for _ in range(200):  # warm: connection, statement plans
        audit_access(action="login", actor=person, obj=person, detail="password", request=request)
    times = []
    for _ in range(n):
        started = time.perf_counter()
        audit_access(action="login", actor=person, obj=person, detail="password", request=request)
        times.append(time.perf_counter() - started)
    _report(f"write one access entry ({n} requests, each its own commit, not waiting for the flush)", times)
    # The same INSERT inside a transaction the request commits anyway: what the entry adds without a commit (fsync)
    # of its own. Rolled back, so that the table stays as it was.
    times = []
    for _ in range(n):
        with transaction.atomic():
            started = time.perf_counter()
            audit_access(action="login", actor=person, obj=person, detail="password", request=request)
            times.append(time.perf_counter() - started)
            transaction.set_rollback(True)
    _report(f"the INSERT alone, inside the request's transaction ({n} requests)", times)


def _report(what: str, seconds: list[float]) -> None:
    ms = [t * 1000 for t in seconds]
    print(
        f"{what}: p50 {percentile(ms, 50):.3f} ms, p95 {percentile(ms, 95):.3f} ms, p99 {percentile(ms, 99):.3f} ms"
        "  (target p95 < 1 ms)"
    )


def generate(n_rows: int, n_people: int) -> list[int]:
    """``n_rows`` entries over the last 400 days, built with the table's secondary indexes dropped and rebuilt (as
    a restore does), the foreign-key checks skipped (every actor exists), then analysed. The people's ids."""
    from django.db import connection

    from portal.models import User

    people = User.objects.bulk_create(User(email=f"person{n}@bench.portal") for n in range(n_people))
    ids = [p.pk for p in people]
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'portal_auditentry' "
            "AND indexname NOT LIKE '%pkey'"
        )
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(
            """
            INSERT INTO portal_auditentry (at, actor_id, action, object_type, object_id, before, after, note)
            SELECT now() - (g * (400 * 86400.0 / %(n)s)) * interval '1 second',
                   CASE WHEN g %% 12 = 6 THEN NULL ELSE (%(ids)s::bigint[])[1 + (g * 7919) %% %(people)s] END,
                   (%(actions)s::text[])[1 + g %% 12], %(type)s, (g %% 5000)::text, NULL,
                   jsonb_build_object('ip', '198.51.100.' || (g %% 250)), 'password'
            FROM generate_series(1::bigint, %(n)s) AS g
            """,
            {"n": n_rows, "ids": ids, "people": len(ids), "actions": ACTIONS, "type": GENERATED},
        )
        cursor.execute("SET session_replication_role = DEFAULT")
        for _, definition in indexes:
            cursor.execute(definition)
        cursor.execute("ANALYZE portal_auditentry")
    print(f"generated {n_rows:,} entries for {n_people} people in {time.perf_counter() - started:.0f} s")
    return ids


def time_page(person_id: int) -> None:
    from django.test import Client
    from django.utils import timezone

    from portal.models import User
    from portal.services import person_admit

    organizer = person_admit(
        email="organizer@bench.portal", institution=None, roles=["organizer"], password="bench-pw-123"
    )
    client = Client()
    client.force_login(organizer)
    email = User.objects.get(pk=person_id).email
    today = timezone.localdate()
    month = f"since={(today.replace(day=1)).isoformat()}&until={today.isoformat()}"
    first = client.get("/organize/audit/").content.decode()
    later = first.split("after=")[1].split('"')[0]
    pages = [
        ("unfiltered", "/organize/audit/"),
        ("next page", f"/organize/audit/?after={later}"),
        ("one person", f"/organize/audit/?person={email}"),
        ("one action (sign-ins)", "/organize/audit/?action=login"),
        ("downloads (export_download and the exports' own entries)", "/organize/audit/?action=export_download"),
        ("this month", f"/organize/audit/?{month}"),
        ("one person, one action, this month", f"/organize/audit/?person={email}&action=identities_viewed&{month}"),
        ("a day a year ago", f"/organize/audit/?since={today.replace(year=today.year - 1).isoformat()}"
                             f"&until={today.replace(year=today.year - 1).isoformat()}"),
    ]  # fmt: skip
    time_pages(client, pages, prefix="page, ", repeat=20)


def drop(ids: list[int]) -> None:
    """The generated entries are deleted as the tests' teardown does (the table refuses it otherwise)."""
    from django.db import connection

    from portal.models import User

    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        try:
            cursor.execute("DELETE FROM portal_auditentry WHERE object_type = %s", [GENERATED])
        finally:
            cursor.execute("SET session_replication_role = DEFAULT")
    User.objects.filter(pk__in=ids).delete()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=5000)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--people", type=int, default=500)
    args = parser.parse_args()
    setup_django("portal_bench_audit")
    time_writes(args.writes)
    ids = generate(args.rows, args.people)
    try:
        time_page(ids[0])
    finally:
        drop(ids)


if __name__ == "__main__":
    main()
