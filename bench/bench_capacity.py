"""Capacity of one box: the review rate the portal sustains, and where its latency curve bends (issue #22).

For each gunicorn layout (processes × threads), reviews are offered at rising rates by an open-loop generator
(``_capacity_client.py``: Poisson arrivals, one gevent loop, a C HTTP parser), each rate for ``--seconds``. A review
is the API's "next" then "submit" by one of ``--reviewers`` reviewers. Printed per layout and rate: offered and
achieved reviews/s, p50 / p95 / p99 of both requests, errors; then the knee (the rate at which the p95 of either
request crosses 50 ms, interpolated between the two rates around it) and whether the target holds (at least 150
reviews/s with p95 under 100 ms). After every layout the database is checked: every acknowledged review stored
exactly once, no item leased twice in one stage.

Run: .venv/bin/python bench/bench_capacity.py [--items 60000] [--reviewers 300] [--layouts 4x4,5x1]
     [--rates 50,100,150,175,200] [--seconds 15] [--floor 25,50,100,150] [--http-parsers python,fast]
     [--then-next no|yes|both] [--pg-statements]

Under every rate a line says what else PostgreSQL did meanwhile (checkpoints, autovacuum and autoanalyze passes and
how long they took, the items table's share of that, WAL per review and how long its flushes took), the stalls a
step can meet, and another what its busy connections were doing, sampled every 50 ms (running, or waiting on a lock, a lightweight lock, I/O or the client; these look-ups, about twenty a second,
count in PostgreSQL's CPU column, small beside the reviews' statements). ``--pg-statements`` restarts the
throwaway cluster with ``pg_stat_statements`` and also prints the statements PostgreSQL spent most time on per
review (``_pg_statements.py``). Before the first layout, one ANALYZE of the items table is timed as autovacuum runs
it under the load, and again with the text and JSON columns that migration 0015 leaves out put back.

``--then-next yes`` sends each review as one ``review-then-next/`` request, whose answer holds the reviewer's next
lease (as the review page's submit takes the next item); ``both`` runs each layout both ways, one after the other.

``--floor`` then offers the same two requests per review, at its own rates, to three endpoints (``_floor_urls.py``):
a plain Django view, and an API view with the portal's token authentication and role check, which do none of a
review's work; and the same API view writing a primary review's rows with one hand-written statement per request.
The first two's CPU per review is what this stack costs before the queue, the state machine and the audit run, so
it bounds the review rate any code on it could reach on these cores; the third bounds what a rewrite of the lease
and the submit as hand-written statements could reach.
Both the server and the generator run on this machine's cores. The CPU time each part spent per review (gunicorn's
processes, PostgreSQL's, the generator's) is printed beside the latencies: their sum says how many reviews per second
the cores can carry at best, which is the ceiling any layout meets ("the rest" is the machine's busy time less the
web processes and the generator: PostgreSQL, and anything else running).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _pg_statements
from _django import ROOT, setup_django
from _server import free_port, percentile, start_server
from bench_review import check_database, prepare

KNEE_MS = 50.0
TARGET_RATE, TARGET_P95_MS = 150.0, 100.0


def run_rate(
    port: int,
    tokens_file: Path,
    rate: float,
    seconds: float,
    seed: int,
    floor: str | None = None,
    then_next: bool = False,
) -> tuple[dict, float]:
    """One open-loop run; returns the generator's result and the CPU seconds the generator itself used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, str(ROOT / "bench" / "_capacity_client.py"), "--port", str(port)]
    command += ["--tokens", str(tokens_file), "--rate", str(rate), "--seconds", str(seconds), "--seed", str(seed)]
    if floor:
        command += ["--floor", floor]
    if then_next:
        command += ["--then-next"]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(output), cpu


def server_cpu_seconds(server: subprocess.Popen) -> float:
    """CPU seconds used so far by gunicorn's master and workers (from /proc)."""
    pids = [server.pid]
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    return _cpu_seconds(pids)


def machine_cpu_seconds() -> float:
    """CPU seconds all cores have spent busy since boot (/proc/stat): the web processes, the generator, PostgreSQL
    and anything else. PostgreSQL's own share is this less the other two (its backends come and go, so summing
    its processes would lose the time of those that exit)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pids: list[int]) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


def knee(rows: list[dict]) -> str:
    """The rate at which the worse p95 crosses KNEE_MS, interpolated between the measured rates around it."""
    previous = None
    for row in rows:
        if row["p95"] > KNEE_MS:
            if previous is None:
                return f"below {row['achieved']:.0f} reviews/s (p95 {row['p95']:.0f} ms at the lowest rate)"
            x0, y0, x1, y1 = previous["achieved"], previous["p95"], row["achieved"], row["p95"]
            at = x0 + (KNEE_MS - y0) * (x1 - x0) / (y1 - y0) if y1 != y0 else x0
            return f"about {at:.0f} reviews/s (p95 {y0:.0f} ms at {x0:.0f}/s, {y1:.0f} ms at {x1:.0f}/s)"
        previous = row
    return f"above {rows[-1]['achieved']:.0f} reviews/s (p95 stayed under {KNEE_MS:.0f} ms at every rate measured)"


def run_rates(
    server,
    port: int,
    tokens_file: Path,
    rates: list[float],
    seconds: float,
    floor: str | None = None,
    then_next: bool = False,
    statements: bool = False,
):
    """Offer reviews at each rate; print one table row per rate (and, with ``statements``, PostgreSQL's time per
    statement under it). Returns the rows and the acknowledged lease ids."""
    rows, acknowledged = [], []
    print("| offered/s | achieved/s | next p50 | next p95 | next p99 | submit p50 | submit p95 | "
          "submit p99 | errors | CPU ms per review: web / PostgreSQL and the rest / generator | cores busy |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for i, rate in enumerate(rates):
        if statements:
            _pg_statements.reset()
        database_before = _pg_statements.activity()
        cpu_before, machine_before = server_cpu_seconds(server), machine_cpu_seconds()
        with _pg_statements.WaitSampler() as waits:
            result, generator_cpu = run_rate(
                port, tokens_file, rate, seconds, seed=100 + i, floor=floor, then_next=then_next
            )
        server_cpu = server_cpu_seconds(server) - cpu_before
        pg_cpu = machine_cpu_seconds() - machine_before - server_cpu - generator_cpu
        nxt, sub = result["next_ms"], result["submit_ms"]
        elapsed, reviews = result["elapsed_s"], max(1, len(result["acknowledged"]))
        cpu_ms = [1000 * cpu / reviews for cpu in (server_cpu, pg_cpu, generator_cpu)]
        row = {
            "achieved": result["achieved_per_s"],
            # The worse p95 of the two kinds of request; with --then-next a step may ask no "next" at all.
            "p95": max((percentile(times, 95) for times in (nxt, sub) if times), default=float("inf")),
            "cpu_ms": cpu_ms,
        }
        rows.append(row)
        acknowledged += result["acknowledged"]
        print(
            f"| {result['offered_per_s']:.0f} | {row['achieved']:.0f} | {percentile(nxt, 50):.0f} | "
            f"{percentile(nxt, 95):.0f} | {percentile(nxt, 99):.0f} | {percentile(sub, 50):.0f} | "
            f"{percentile(sub, 95):.0f} | {percentile(sub, 99):.0f} | {len(result['errors'])} | "
            "{:.1f} / {:.1f} / {:.1f}".format(*cpu_ms)
            + f" | {(server_cpu + pg_cpu + generator_cpu) / elapsed:.2f} |"
        )
        if result["errors"]:
            print(f"  first error: {result['errors'][0]}")
        print(_pg_statements.activity_line(database_before, _pg_statements.activity(), len(result["acknowledged"])))
        print(waits.line())
        if statements:
            print("\n".join(_pg_statements.report(len(result["acknowledged"]))))
        if any(error.startswith("next 204") for error in result["errors"]):
            # 204: no item left to lease. The rows after this would measure an empty queue, not the review loop.
            print(f"  the queue ran out of items: the rates after {rate:.0f}/s were not run (raise --items)")
            break
    return rows, acknowledged


def cores_allow(rows: list[dict]) -> str:
    """The review rate the cores could carry at most, from the CPU per review below saturation (cores busy < 1.5)."""
    per_review = [sum(row["cpu_ms"]) for row in rows[:2]]
    ms = sum(per_review) / len(per_review)
    return f"{ms:.1f} ms of CPU per review, so at most {1000 * (os.cpu_count() or 1) / ms:.0f} reviews/s on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=60_000)
    parser.add_argument("--reviewers", type=int, default=300)
    parser.add_argument("--layouts", default="4x4,5x1", help="gunicorn processes x threads, comma separated")
    parser.add_argument("--rates", default="50,100,150,175,200", help="offered reviews per second")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument(
        "--keepalive",
        type=int,
        default=75,
        help="gunicorn's WEB_KEEPALIVE; 0 closes each connection after its response",
    )
    parser.add_argument(
        "--then-next",
        default="no",
        choices=["no", "yes", "both"],
        help="send each review with review-then-next/ (the next lease in the same answer): yes, or both after each other",
    )
    parser.add_argument(
        "--http-parsers",
        default="",
        help="run each layout with each of gunicorn's HTTP parsers, e.g. python,fast (default: gunicorn's choice)",
    )
    parser.add_argument(
        "--floor",
        default="",
        help="also offer the same requests, at these rates, to endpoints that do none of a review's work "
        "(bench/_floor_urls.py), served by the first layout: the stack's own cost per review",
    )
    parser.add_argument(
        "--pg-statements",
        action="store_true",
        help="restart the throwaway cluster with pg_stat_statements and print PostgreSQL's time per statement and "
        "review under every rate (not with DATABASE_URL)",
    )
    args = parser.parse_args()
    setup_django("portal_bench_capacity")
    from django.db import connection

    if args.pg_statements:
        if os.environ.get("DATABASE_URL"):
            parser.error("--pg-statements restarts the bench's own cluster; unset DATABASE_URL")
        _pg_statements.preload(os.environ["PORTAL_PGDATA"])

    tokens = prepare(args.items, args.reviewers)
    if not os.environ.get("DATABASE_URL"):  # a setting of the bench's own cluster, never of someone's server
        _pg_statements.track_wal_timing()
        lean, full = _pg_statements.analyze_items_ms()
        print(f"ANALYZE of the items table: {lean:,.0f} ms, {full:,.0f} ms with its text and JSON columns")
    connection.close()
    rates = [float(r) for r in args.rates.split(",")]
    print(f"# {os.uname().nodename}: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    with tempfile.TemporaryDirectory() as tmp:
        tokens_file = Path(tmp) / "tokens"
        tokens_file.write_text("\n".join(tokens))
        layouts = [tuple(int(n) for n in layout.split("x")) for layout in args.layouts.split(",")]
        parsers = args.http_parsers.split(",") if args.http_parsers else [None]
        modes = {"no": [False], "yes": [True], "both": [False, True]}[args.then_next]
        runs = [(layout, p, m) for layout in layouts for p in parsers for m in modes]
        for (workers, threads), http_parser, then_next in runs:
            port = free_port()
            server = start_server(port, workers, threads, keepalive=args.keepalive, http_parser=http_parser)
            try:
                run_rate(port, tokens_file, 20, 3, seed=1)  # warm every worker (imports, connections)
                print(
                    f"\ngunicorn {workers} processes x {threads} threads, keep-alive {args.keepalive} s, "
                    f"HTTP parser {http_parser or 'gunicorn default'}, {args.seconds:.0f} s per rate, each review "
                    + ("one review-then-next request" if then_next else "next + submit")
                )
                rows, acknowledged = run_rates(
                    server, port, tokens_file, rates, args.seconds, then_next=then_next, statements=args.pg_statements
                )
            finally:
                server.terminate()
                server.wait(30)
            met = [r for r in rows if r["achieved"] >= TARGET_RATE and r["p95"] < TARGET_P95_MS]
            print(f"knee (p95 crosses {KNEE_MS:.0f} ms): {knee(rows)}")
            print(
                f"target (>= {TARGET_RATE:.0f} reviews/s with p95 < {TARGET_P95_MS:.0f} ms): "
                + (f"met at {max(r['achieved'] for r in met):.0f} reviews/s" if met else "not met")
            )
            print(f"below saturation (the two lowest rates): {cores_allow(rows)}")
            print(f"database: {check_database(acknowledged)}")
            connection.close()
            time.sleep(1)
        if args.floor:
            floor_rates = [float(r) for r in args.floor.split(",")]
            workers, threads = layouts[0]
            port = free_port()
            server = start_server(port, workers, threads, settings_module="_floor_settings")
            try:
                for path, what in (
                    ("/bench/floor/django/", "a plain Django view (gunicorn and the portal's middleware)"),
                    ("/bench/floor/api/", "an API view with the portal's token authentication and role check"),
                    (
                        "/bench/floor/sql/",
                        "the same API view writing a primary review's rows with one hand-written statement per "
                        "request (a lower bound for a rewrite of the lease and the submit)",
                    ),
                ):
                    run_rate(port, tokens_file, 20, 3, seed=1, floor=path)
                    print(f"\nfloor: both requests of a review answered by {what}, {workers} x {threads}")
                    rows, _ = run_rates(server, port, tokens_file, floor_rates, args.seconds, floor=path)
                    print(f"below saturation: {cores_allow(rows)}")
            finally:
                server.terminate()
                server.wait(30)


if __name__ == "__main__":
    main()
