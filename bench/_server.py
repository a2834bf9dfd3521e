"""Helpers shared by the HTTP benchmarks: a free port, percentiles, and gunicorn on 127.0.0.1."""

from __future__ import annotations

import http.client
import os
import socket
import statistics
import subprocess
import time

from _django import ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def start_server(
    port: int,
    workers: int,
    threads: int,
    settings_module: str | None = None,
    keepalive: int = 75,
    http_parser: str | None = None,
) -> subprocess.Popen:
    """gunicorn as gunicorn.conf.py serves the portal (``keepalive``: its WEB_KEEPALIVE, 75 s unless set);
    ``settings_module`` (a module in bench/) replaces the settings; ``http_parser`` gunicorn's ``--http-parser``
    (``python``, or ``fast``: the gunicorn_h1c C parser; None: gunicorn's choice, the C one when installed)."""
    env = {**os.environ, "DEBUG": "0", "LOG_LEVEL": "WARNING"}
    if settings_module:
        env["DJANGO_SETTINGS_MODULE"] = settings_module
    cmd = [
        str(ROOT / ".venv" / "bin" / "gunicorn"),
        "config.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--worker-class",
        "gthread",
        "--log-level",
        "warning",
        "--keep-alive",
        str(keepalive),
    ]
    if settings_module:
        cmd += ["--pythonpath", str(ROOT / "bench")]
    if http_parser:
        cmd += ["--http-parser", http_parser]
    server = subprocess.Popen(cmd, cwd=ROOT, env=env)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health/")
            if conn.getresponse().status < 500:
                return server
        except OSError:
            time.sleep(0.3)
    server.terminate()
    raise SystemExit("gunicorn did not start")


def add_server_arguments(parser) -> None:
    """The options every HTTP benchmark shares: run length and the gunicorn set-up (as gunicorn.conf.py serves)."""
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument(
        "--keepalive",
        type=int,
        default=75,
        help="seconds gunicorn keeps an idle connection (gunicorn.conf.py's WEB_KEEPALIVE); 0 closes each after its response",
    )


def run_clients(args, count: int, make_client) -> tuple[list, float]:
    """Start gunicorn, run ``count`` client threads made by ``make_client(i, port, stop_at, barrier)`` until
    ``args.seconds`` have passed (they start together at the barrier), stop the server. Returns the clients (with
    their recorded timings) and the wall time."""
    import threading

    port = free_port()
    server = start_server(port, args.workers, args.threads, keepalive=args.keepalive)
    try:
        barrier = threading.Barrier(count)
        stop_at = time.time() + args.seconds
        clients = [make_client(i, port, stop_at, barrier) for i in range(count)]
        started = time.perf_counter()
        for client in clients:
            client.start()
        for client in clients:
            client.join(args.seconds + 60)
        return clients, time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(30)
