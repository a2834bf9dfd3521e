"""Inserting many rows at once with PostgreSQL COPY: several times faster than multi-row INSERT for wide rows with
JSON (an import of 200,000 items, a release of 50,000 frozen items; docs/benchmarks.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import cast

from django.db import connection, models
from psycopg.types.json import Jsonb


def copy_insert(model: type[models.Model], objects: Iterable[models.Model]) -> None:
    """Insert ``objects`` (unsaved instances of ``model``) with COPY, in the caller's transaction.

    Values are prepared by each field exactly as ``save()`` would (``pre_save`` fills ``auto_now_add``,
    ``get_db_prep_save`` adapts JSON), so the rows are the ones ``bulk_create`` would have written; row triggers fire
    as for INSERT. Primary keys are not set on the instances (nothing here needs them).
    """
    # The primary key comes from its sequence; generated columns are computed by the database and cannot be written.
    fields = [f for f in model._meta.concrete_fields if not f.primary_key and not f.generated]
    columns = ", ".join(connection.ops.quote_name(cast(str, f.column)) for f in fields)  # concrete: has a column
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {model._meta.db_table} ({columns}) FROM STDIN") as copy:
            for obj in objects:
                copy.write_row([f.get_db_prep_save(f.pre_save(obj, add=True), connection) for f in fields])


def copy_insert_rows(model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence]) -> None:
    """Insert ``rows`` with COPY, in the caller's transaction: each row holds the values of ``columns`` (field
    attribute names such as ``batch_id``) already in the database's form: text, numbers, None, JSON as its text.

    For many rows that are not model instances yet (an import): no instance is built and no field prepares each
    value. Every other column gets its field's default, prepared once as ``save()`` would (``auto_now_add`` fills
    the same moment for every row)."""
    by_attname = {f.attname: f for f in model._meta.concrete_fields if not f.primary_key and not f.generated}
    others = [f for name, f in by_attname.items() if name not in columns]
    blank = model()
    tail = tuple(_copy_value(f.get_db_prep_save(f.pre_save(blank, add=True), connection)) for f in others)
    names = [cast(str, by_attname[name].column) for name in columns] + [cast(str, f.column) for f in others]
    quoted = ", ".join(connection.ops.quote_name(name) for name in names)
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {model._meta.db_table} ({quoted}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row((*row, *tail))


def _copy_value(value):
    """A default as COPY text takes it: JSON adapters (``Jsonb``) become their JSON text, once."""
    if isinstance(value, Jsonb):
        return (value.dumps or json.dumps)(value.obj)
    return value
