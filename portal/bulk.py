"""Inserting many rows at once with PostgreSQL COPY: several times faster than multi-row INSERT for wide rows with
JSON (an import of 200,000 items, a release of 50,000 frozen items; docs/benchmarks.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from django.db import connection, models


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
