"""Test set-up: a throwaway embedded PostgreSQL cluster (unless DATABASE_URL is set), users per role."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import pytest
from django.conf import settings

# Password hashing dominates user creation; tests do not need a slow hasher.
settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Point the embedded backend at a fresh cluster before the first connection; it is deleted at exit.
_db = settings.DATABASES["default"]
if _db["ENGINE"] == "portal.pgbackend":
    _throwaway = tempfile.mkdtemp(prefix="portal-test-pg-")
    shutil.rmtree(_throwaway)  # the wheel creates the folder itself (its parent must exist)
    _db["OPTIONS"] = {**_db["OPTIONS"], "pgdata": _throwaway, "cleanup_mode": "delete"}

# The files freezes keep go to a folder of this test process's own, removed at exit.
settings.RELEASE_FILES_DIR = Path(tempfile.mkdtemp(prefix="portal-test-release-files-"))
atexit.register(shutil.rmtree, settings.RELEASE_FILES_DIR, True)


@pytest.fixture
def make_user(db):
    """Create a user holding the given roles: ``make_user("reviewer")``."""
    from portal.services import person_admit

    counter = {"n": 0}

    def factory(*roles: str, email: str | None = None, password: str = "pw-for-tests-123"):
        counter["n"] += 1
        address = email or f"{'-'.join(roles) or 'norole'}{counter['n']}@test.portal"
        return person_admit(email=address, institution=None, roles=list(roles), password=password)

    return factory


@pytest.fixture
def organizer(make_user):
    return make_user("organizer")


@pytest.fixture
def reviewer(make_user):
    return make_user("reviewer")


@pytest.fixture
def organizer_client(client, organizer):
    client.force_login(organizer)
    return client


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """A transactional test ends with Django's flush (TRUNCATE of every table), which the database refuses
    while a release table holds rows: such a test's releases are removed first (before its fixtures end)."""
    marker = item.get_closest_marker("django_db")
    transactional = (marker is not None and marker.kwargs.get("transaction")) or any(
        name in item.fixturenames for name in ("transactional_db", "live_server")
    )
    if transactional:
        from tests.release_tables import release_tables_wipe

        release_tables_wipe()
    return (yield)
