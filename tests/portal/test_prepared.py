"""portal.prepared: the few statements every request runs are prepared once per connection, and binding their plain
Python values on the server keeps every value whole (the truncation of tests/portal/test_database_binding.py comes
from a model field's Int2, which these statements never receive)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.db import DataError, connection, transaction

from annotation.models import VettingConfig
from annotation.services.imports import items_import
from annotation.services.queue import _sql, assignment_next
from portal.prepared import prepared_cursor

pytestmark = pytest.mark.django_db


def _prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")
        return [statement for (statement,) in cursor.fetchall()]


def test_the_connection_prepares_after_the_configured_number_of_runs():
    threshold = settings.DATABASES["default"]["OPTIONS"]["prepare_threshold"]
    assert threshold == 5 and connection.connection.prepare_threshold == threshold
    sql = "SELECT %s::int + 1 AS portal_prepared_probe"
    for n in range(threshold + 1):
        with prepared_cursor() as cursor:
            cursor.execute(sql, [n])
            assert cursor.fetchone() == (n + 1,)
    assert any("portal_prepared_probe" in statement for statement in _prepared_statements())


def test_a_value_past_a_small_integer_column_is_refused_through_a_prepared_cursor():
    config = VettingConfig.load()
    table = VettingConfig._meta.db_table
    for _ in range(7):  # prepared by now
        with pytest.raises(DataError, match="smallint out of range"), transaction.atomic(), prepared_cursor() as cursor:
            cursor.execute(f"UPDATE {table} SET gold_min_answers = %s WHERE id = %s", [70_000, config.pk])
    config.refresh_from_db()
    assert config.gold_min_answers != 70_000 - 65_536


def test_the_review_queues_candidate_statement_is_prepared_on_a_busy_connection(make_user):
    items_import(paths=[Path(__file__).resolve().parents[2] / "fixtures" / "cliniqlink-sample"])
    for _ in range(8):
        assert assignment_next(reviewer=make_user("reviewer")) is not None
    opening = _sql()["candidate"][:60]  # no parameter in it, so the prepared text starts the same
    assert any(statement.startswith(opening) for statement in _prepared_statements())
