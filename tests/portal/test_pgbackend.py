"""The embedded-cluster backend: connection parameters without touching the settings every thread shares."""

import pytest
from django.conf import settings
from django.db import connections

pytestmark = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "portal.pgbackend", reason="needs the embedded cluster"
)


class _WatchedSettings(dict):
    """A settings dict that records every write, as another thread connecting at the same moment would see it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.writes = []

    def __setitem__(self, key, value):
        self.writes.append(key)
        super().__setitem__(key, value)


def test_connection_params_leave_the_shared_settings_alone(db, monkeypatch):
    # Regression: the backend once swapped OPTIONS for a copy without "pgdata" while computing the parameters, and
    # 45 threads connecting at once failed with KeyError('pgdata').
    connection = connections["default"]  # the wrapper itself: monkeypatch cannot restore through the proxy
    watched = _WatchedSettings(connection.settings_dict)
    options_before = dict(watched["OPTIONS"])
    monkeypatch.setattr(connection, "settings_dict", watched)

    params = connection.get_connection_params()

    assert watched.writes == []
    assert watched["OPTIONS"] == options_before
    assert "pgdata" not in params and "cleanup_mode" not in params  # not connection arguments for psycopg
    assert params["host"]  # the cluster's socket folder
