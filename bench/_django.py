"""Bench scripts run Django against a throwaway embedded PostgreSQL cluster (or DATABASE_URL if set)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def setup_django(db_name: str = "portal_bench") -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if not os.environ.get("DATABASE_URL"):
        os.environ.setdefault("PORTAL_PGDATA", str(Path(tempfile.mkdtemp(prefix="portal-bench-")) / "pgdata"))
        os.environ.setdefault("PORTAL_DB_NAME", db_name)
    import django

    django.setup()
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"] == "portal.pgbackend":
        db["OPTIONS"]["cleanup_mode"] = "delete"
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def own_peak_mib() -> float:
    """This process's own peak memory in MiB: ``VmHWM`` of /proc/self/status. Not ``ru_maxrss``: Linux carries the
    high-water mark across ``exec``, so a bench's child process started from a parent holding a seeded study would
    report the parent's peak as its own. ``ru_maxrss`` where /proc is missing."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
