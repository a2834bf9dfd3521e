"""Test set-up: a throwaway embedded PostgreSQL cluster (unless DATABASE_URL is set), users per role."""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from django.apps import apps as django_apps
from django.conf import settings
from django.core.management.base import CommandError
from django.db.models.signals import post_migrate
from django.test import TransactionTestCase
from psycopg.errors import DeadlockDetected

# Password hashing dominates user creation; tests do not need a slow hasher.
settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Point the embedded backend at a fresh cluster before the first connection; it is deleted at exit.
_db = settings.DATABASES["default"]
if _db["ENGINE"] == "portal.pgbackend":
    _throwaway = tempfile.mkdtemp(prefix="portal-test-pg-")
    shutil.rmtree(_throwaway)  # the wheel creates the folder itself (its parent must exist)
    _db["OPTIONS"] = {**_db["OPTIONS"], "pgdata": _throwaway, "cleanup_mode": "delete"}

# What the portal writes to disk (uploads, the files freezes keep) goes to a folder of this test process's own,
# removed at exit: parallel (xdist) workers, each with its own database and so its own job and release ids, never
# share one. In the environment too, for the processes tests start (Celery workers).
_media = Path(tempfile.mkdtemp(prefix="portal-test-media-"))
atexit.register(shutil.rmtree, _media, True)
settings.MEDIA_ROOT = _media
settings.PORTAL_UPLOADS_DIR = _media / "uploads"
settings.RELEASE_FILES_DIR = _media / "releases"
settings.RELEASE_FILES_DIR.mkdir()
os.environ["MEDIA_ROOT"] = str(_media)
os.environ["RELEASE_FILES_DIR"] = str(settings.RELEASE_FILES_DIR)

# Data migrations that seed rows (not those that only rewrite existing rows), as (module, function).
_SEED_MIGRATIONS = [
    ("portal.migrations.0002_seed_role_groups", "create_groups"),
    ("annotation.migrations.0009_guidelines", "load_default_guidelines"),
]


def _reseed_after_flush(sender, **kwargs) -> None:
    """A transactional test (transaction=True, transactional_db, live_server) ends with Django's flush, a
    TRUNCATE of every table, which also removes the rows data migrations created (the role groups, the shipped
    guidelines); the flush then sends post_migrate, as ``migrate`` does. Seed those rows again here with the
    migrations' own functions (both skip rows that exist), so that a test after a transactional one finds the
    database as migrated. Serially pytest-django runs transactional tests last; a parallel worker does not."""
    apps = kwargs.get("apps") or django_apps  # migrate sends its models' state; flush sends none (the app registry)
    for module, function in _SEED_MIGRATIONS:
        getattr(importlib.import_module(module), function)(apps, None)


# post_migrate is sent once for every app with models: answer it once, for one of them.
post_migrate.connect(_reseed_after_flush, sender=django_apps.get_app_config("annotation"), dispatch_uid="reseed")


def _flush_retrying_a_deadlock(self, _flush=TransactionTestCase._fixture_teardown) -> None:
    """A transactional test ends with Django's flush, one TRUNCATE that locks every table in turn. A request the
    live server got late (a browser page's keepalive draft save sent as the page closed, after the test's wait for a
    quiet server) can hold a lock the TRUNCATE needs while waiting for one it already took: PostgreSQL then aborts
    one of them. When that is the flush, its transaction was rolled back, the request goes on and ends, and the
    flush is run again instead of failing the test at teardown (and leaving its rows to the next test)."""
    for attempt in range(1, 4):
        try:
            return _flush(self)
        except CommandError as error:
            cause = error.__cause__
            while cause is not None and not isinstance(cause, DeadlockDetected):
                cause = cause.__cause__
            if cause is None or attempt == 3:
                raise


TransactionTestCase._fixture_teardown = _flush_retrying_a_deadlock


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


# Under xdist, --dist loadfile hands whole files to the workers in collection order (kept by
# --no-loadscope-reorder), so the long files go first and no worker starts one near the end while the others idle:
# the longest by name, longest first (the hostile-value crawl alone takes most of a worker's run), then every file
# with a test of these markers, in this order. A serial run keeps pytest-django's order.
LONGEST_FILES = (
    "portal/test_hostile_values.py",
    "e2e/test_worker_faults.py",
    "e2e/test_load_short.py",
    "browser/test_crawl_browser.py",
)
LONG_FILES_FIRST = ("slow", "e2e", "browser")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    if not hasattr(config, "workerinput"):
        return
    here = Path(__file__).parent
    rank: dict[Path, int] = {}
    for item in items:
        name = item.path.relative_to(here).as_posix()
        names = {mark.name for mark in item.iter_markers()}
        if name in LONGEST_FILES:
            first = LONGEST_FILES.index(name)
        else:
            first = len(LONGEST_FILES) + next(
                (n for n, marker in enumerate(LONG_FILES_FIRST) if marker in names), len(LONG_FILES_FIRST)
            )
        rank[item.path] = min(rank.get(item.path, first), first)
    items.sort(key=lambda item: rank[item.path])  # stable: otherwise the order as collected


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
