"""Backup with pg_dump and restore into an empty database: every table comes back identical."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from annotation.models import QAItem
from annotation.services.imports import items_import, sources_import
from annotation.services.releases import release_freeze
from portal.dbtools import database_url

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)


def _table_fingerprints(conninfo: str) -> dict[str, tuple[int, str]]:
    """Row count and an order-independent digest of every portal table."""
    with psycopg.connect(conninfo) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            ).fetchall()
        ]
        result = {}
        for table in tables:
            count, digest = conn.execute(
                f"SELECT count(*), md5(coalesce(string_agg(md5(t::text), '' ORDER BY md5(t::text)), '')) FROM \"{table}\" t"
            ).fetchone()
            result[table] = (count, digest)
        return result


def test_backup_restores_into_an_empty_database_identically(tmp_path, make_user):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    sources_import(paths=[ROOT / "fixtures" / "demo-sources.csv"])
    make_user("reviewer")
    # A frozen release: pg_restore loads its rows before it creates the triggers that refuse new ones.
    QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5.0)
    release_freeze(name="backed-up")
    source_url = database_url()
    dump = tmp_path / "portal.dump"
    call_command("backup", str(dump))
    assert dump.stat().st_size > 0

    target_name = "restore_target"
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{target_name}"')
        cursor.execute(f'CREATE DATABASE "{target_name}"')
    target_url = source_url.replace(f"/{connection.settings_dict['NAME']}?", f"/{target_name}?")
    assert target_url != source_url
    # The documented restore command, pointed at the empty database as a fresh server would be.
    subprocess.run(
        [sys.executable, "manage.py", "restore", str(dump), "--yes"],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": target_url},
        check=True,
        capture_output=True,
    )
    before = _table_fingerprints(source_url)
    after = _table_fingerprints(target_url)
    assert before["annotation_qaitem"][0] == 35
    assert after == before
    assert before["annotation_releaseitem"][0] == 35
    # The restored database guards its releases as the original does.
    with psycopg.connect(target_url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="releases are immutable"):
            conn.execute("TRUNCATE annotation_releaseitem")
