"""Emptying the release tables, which the database otherwise refuses (releases are immutable)."""

from __future__ import annotations

from django.db import connection


def release_tables_wipe() -> None:
    """Delete every release with the release triggers off for this session only.

    ``session_replication_role = replica`` skips ordinary triggers and may only be set by a superuser (the
    tests' embedded cluster runs as one): an application role cannot do this.
    """
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        try:
            cursor.execute("DELETE FROM annotation_releaseitem")
            cursor.execute("DELETE FROM annotation_release")
            # The audit trail is append-only too (portal migration 0011): the flush's TRUNCATE needs it empty.
            cursor.execute("DELETE FROM portal_auditentry")
        finally:
            cursor.execute("SET session_replication_role = DEFAULT")
