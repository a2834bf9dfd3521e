"""A cursor for the few hand-written statements every request runs, prepared once per database connection.

Django binds parameters on the client and prepares nothing (so that connection poolers keep working), so PostgreSQL
plans each statement afresh. For the review queue's candidate statement and token authentication's, planning cost
more than running (``bench/bench_statements.py`` measures both, and what preparing them saves).
:func:`prepared_cursor` binds its parameters on the server instead, and psycopg prepares a statement once it
has run ``DB_PREPARE_THRESHOLD`` times on a connection (5 by default; "off" never prepares). PostgreSQL then plans it
a few more times and settles on one generic plan. psycopg forgets a connection's prepared statements whenever a
transaction on it rolls back (a refused request, say); they are prepared again after as many runs.

Only for statements whose parameters are plain Python values (int, str, datetime, lists of int). Server-side binding
of a model field's value is what truncates a small-integer field past its range (Django hands psycopg an ``Int2``;
tests/portal/test_database_binding.py); a plain ``int`` is sent as the smallest type that holds it, so the database
still sees the value itself.
"""

from __future__ import annotations

import psycopg
from django.db import connection
from django.db.backends.utils import CursorWrapper


def prepared_cursor() -> CursorWrapper:
    """A cursor on the default connection that binds on the server, wrapped as Django wraps its own cursors
    (database errors translated, queries logged when Django logs them). Use as ``with prepared_cursor() as cursor``."""
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    cursor = psycopg.Cursor(connection.connection)
    return connection.make_debug_cursor(cursor) if connection.queries_logged else connection.make_cursor(cursor)
