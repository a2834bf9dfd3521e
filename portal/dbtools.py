"""Locating the database and PostgreSQL client programs for backup / restore."""

from __future__ import annotations

import shutil
from pathlib import Path

from django.conf import settings
from django.db import connection


def database_url() -> str:
    db = settings.DATABASES["default"]
    if db["ENGINE"] == "portal.pgbackend":
        from portal.embedded_pg import connection_url

        return connection_url(
            db["OPTIONS"]["pgdata"], database=db["NAME"], cleanup_mode=db["OPTIONS"].get("cleanup_mode", "stop")
        )
    params = connection.get_connection_params()
    host = params.get("host") or "localhost"
    port = params.get("port") or 5432
    user = params.get("user") or ""
    password = params.get("password") or ""
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    if host.startswith("/"):
        return f"postgresql://{auth}/{db['NAME']}?host={host}&port={port}"
    return f"postgresql://{auth}{host}:{port}/{db['NAME']}"


def pg_program(name: str) -> Path:
    """Prefer the client programs of the embedded wheel (same major version as its server), else the PATH."""
    try:
        from portal.embedded_pg import bin_path

        path = bin_path(name)
        if path.exists():
            return path
    except ImportError:
        pass
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} not found; install PostgreSQL client programs")
    return Path(found)
