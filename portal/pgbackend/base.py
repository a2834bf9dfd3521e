"""PostgreSQL backend that starts the embedded cluster on the first connection.

It is Django's own PostgreSQL backend (psycopg 3) with one addition: before connecting, the cluster named by
``OPTIONS["pgdata"]`` is started (or attached to) and the connection goes through its unix socket.
"""

from django.db.backends.postgresql import base

_EMBEDDED_KEYS = ("pgdata", "cleanup_mode")


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        from portal.embedded_pg import ensure_running

        # Django copies OPTIONS into the connection parameters; take our own keys back out of that copy. The
        # settings dict itself is shared by every thread's connection, so it must never be edited here (an earlier
        # version swapped OPTIONS for a stripped copy during the call, and a thread connecting at that moment
        # found no "pgdata").
        params = super().get_connection_params()
        embedded = {key: params.pop(key) for key in _EMBEDDED_KEYS if key in params}
        # The maintenance database ("postgres") is used by test set-up; create only the named one.
        target = self.settings_dict["NAME"] or "postgres"
        server = ensure_running(
            embedded["pgdata"],
            database=target if not target.startswith("test_") else "postgres",
            cleanup_mode=embedded.get("cleanup_mode", "stop"),
        )
        params.update(server)
        return params
