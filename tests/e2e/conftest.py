"""Real processes for end-to-end tests: redis-server and Celery workers against the test database."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(predicate, timeout: float = 60.0, interval: float = 0.2, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def start_redis(directory: Path) -> tuple[subprocess.Popen, str]:
    """A throwaway redis-server on a free port (no persistence); its process and URL. Also used by bench/.

    The port is free when chosen, not reserved: another process (a parallel test worker starting its own redis)
    may take it first. So the server that answers must be this one (its process id), else another port is tried.
    """
    for _attempt in range(5):
        port = free_port()
        proc = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        def ours_or_gone(proc=proc, port=port):
            if proc.poll() is not None:
                return "gone"  # could not listen on the port: taken meanwhile
            try:
                with redis.Redis(host="127.0.0.1", port=port, socket_timeout=0.5) as client:
                    info = client.info("server")
            except redis.RedisError:
                return None
            return "ours" if info.get("process_id") == proc.pid else None

        if wait_until(ours_or_gone, 10, what="redis-server") == "ours":
            return proc, f"redis://127.0.0.1:{port}/0"
        proc.wait(10)
    raise AssertionError("redis-server found no free port in 5 tries")


@pytest.fixture
def redis_url(tmp_path):
    if not shutil.which("redis-server"):
        if os.environ.get("CI"):
            pytest.fail("redis-server is missing: .ci/run must install Debian's redis-server")
        pytest.skip("redis-server not installed (apt-get install redis-server)")
    proc, url = start_redis(tmp_path)
    yield url
    proc.terminate()
    proc.wait(10)


def test_database_url() -> str:
    from django.db import connection

    params = connection.get_connection_params()
    host, port = params.get("host", ""), params.get("port", 5432)
    name = connection.settings_dict["NAME"]
    if host.startswith("/"):
        return f"postgresql://{params.get('user', 'postgres')}@/{name}?host={host}&port={port}"
    password = params.get("password") or ""
    return f"postgresql://{params.get('user')}:{password}@{host}:{port}/{name}"


test_database_url.__test__ = False  # a helper, not a test


class WorkerProcess:
    """A real `celery -A config worker` process (prefork, one child) with late acknowledgement."""

    def __init__(self, broker: str, log_path: Path):
        self.broker = broker
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None

    def start(self) -> WorkerProcess:
        env = {
            **os.environ,
            "DATABASE_URL": test_database_url(),
            "CELERY_BROKER_URL": self.broker,
            "PYTHONPATH": str(ROOT),
            "OMP_NUM_THREADS": "1",
            "OMP_WAIT_POLICY": "PASSIVE",
            "HF_HUB_OFFLINE": "1",
        }
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--concurrency",
                "1",
                "--loglevel",
                "INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return self

    def kill(self) -> None:
        """SIGKILL the whole worker process group, as a crash or OOM kill would."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


@pytest.fixture
def broker(redis_url, transactional_db):
    """Point this process's Celery app at the real broker (tasks are no longer run in-process)."""
    from config.celery import app

    saved = {key: app.conf.get(key) for key in ("broker_url", "task_always_eager")}
    app.conf.update(broker_url=redis_url, task_always_eager=False)
    _reset_connections(app)
    yield redis_url
    app.conf.update(saved)
    _reset_connections(app)


def _reset_connections(app) -> None:
    # Connections made for another broker URL must not be reused. kombu keeps its pools in process-wide registries
    # keyed by broker URL: closing a pool without clearing them left a closed pool there, and the next job queued
    # in-process (memory:// broker) after an end-to-end test failed with "Acquire on closed pool".
    from kombu import pools

    pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def worker_factory(broker, tmp_path):
    workers: list[WorkerProcess] = []

    def start() -> WorkerProcess:
        worker = WorkerProcess(broker, tmp_path / "worker.log").start()
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()
