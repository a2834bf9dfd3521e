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


def start_server(port: int, workers: int, threads: int) -> subprocess.Popen:
    env = {**os.environ, "DEBUG": "0", "LOG_LEVEL": "WARNING"}
    cmd = [
        str(ROOT / ".venv" / "bin" / "gunicorn"),
        "portal.wsgi:application",
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
        "30",
    ]
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
