"""Parameters are bound on the client (Django's default for psycopg 3), so PostgreSQL checks every value against its
column. With ``server_side_binding`` Django passes a small-integer field's value as psycopg's ``Int2``, whose binary
form keeps only the low 16 bits: 70,000 would be stored as 4,464 without an error. That is why the portal does not
turn it on for Django's statements; the few hand-written statements every request runs bind plain Python values on
the server to be prepared (portal.prepared; tests/portal/test_prepared.py holds that they keep every value whole)."""

from __future__ import annotations

import pytest
from django.db import DataError, connection, transaction

from annotation.models import VettingConfig

pytestmark = pytest.mark.django_db


def test_server_side_binding_is_off():
    assert connection.settings_dict.get("OPTIONS", {}).get("server_side_binding") is not True


def test_a_value_past_a_small_integer_column_is_refused_not_wrapped():
    config = VettingConfig.load()
    config.gold_min_answers = 70_000
    with pytest.raises(DataError, match="smallint out of range"), transaction.atomic():
        config.save()
    config.refresh_from_db()
    assert config.gold_min_answers != 70_000 - 65_536
