"""A freeze's snapshot, taken and copied inside PostgreSQL.

The selected items are copied once into a temporary table, in the freeze's transaction and by one statement. The
manifests are computed from that table's rows and the release's items are inserted from the same table, so what is
hashed is by construction what is stored, and no record travels through Python on its way into the release. This
replaced building model instances and streaming them back with COPY, a round trip through Python for every record
(docs/benchmarks.md).

The table lives only inside the freeze's transaction (``ON COMMIT DROP``; a refused freeze rolls it back with
everything else) and :func:`snapshot_store` drops it at once, so a second freeze in the same transaction (a test, a
script) starts afresh.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from annotation.models import QAItem, Release, ReleaseItem

_TABLE = "release_snapshot"
#: What the export and the manifests read of each frozen item, in the table's and the release items' column names.
ENTRY_COLUMNS = (
    "position",
    "item_id",
    "uid",
    "qa_type",
    "record",
    "final_verdict",
    "final_relevance",
    "final_source",
    "review_count",
    "nuggets",
)
_JSON_COLUMNS = ("record", "nuggets")


def snapshot_take(selected: QuerySet[QAItem]) -> int:
    """Copy the ``selected`` items (annotated with ``review_count``) into the snapshot table; the number copied.

    Positions follow the item ids (the selection's order), counted from 0."""
    columns = ("id", "uid", "qa_type", "raw", "final_verdict", "final_relevance", "final_source", "review_count")
    sql, params = selected.values(*columns).query.sql_with_params()  # review_count: annotated by the caller
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMPORARY TABLE {_TABLE} ON COMMIT DROP AS "
            "SELECT (row_number() OVER (ORDER BY s.id) - 1)::integer AS position, s.id AS item_id, s.uid, s.qa_type,"
            " s.raw AS record, s.final_verdict, s.final_relevance, s.final_source,"
            " s.review_count::smallint AS review_count, NULL::jsonb AS nuggets"
            f" FROM ({sql}) AS s",
            params,
        )
        return cursor.rowcount


def snapshot_item_ids() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT item_id FROM {_TABLE} ORDER BY position")
        return [item_id for (item_id,) in cursor.fetchall()]


def snapshot_set_nuggets(nuggets: Mapping[int, Any]) -> None:
    """Record each item's frozen nuggets (``{item_id: json value}``) in the snapshot."""
    if not nuggets:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_TABLE} AS s SET nuggets = v.nuggets::jsonb"
            " FROM unnest(%s::bigint[], %s::text[]) AS v(item_id, nuggets) WHERE s.item_id = v.item_id",
            [list(nuggets), [json.dumps(value) for value in nuggets.values()]],
        )


def snapshot_entries() -> list[dict]:
    """The snapshot's rows in release order, as :func:`release_entries` will read them back after the freeze."""
    return _entries(_TABLE, "", [])


def snapshot_store(release: Release) -> None:
    """Insert the snapshot as ``release``'s items and drop the snapshot table."""
    columns = ", ".join(ENTRY_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {ReleaseItem._meta.db_table} (release_id, {columns}) SELECT %s, {columns} FROM {_TABLE}",
            [release.pk],
        )
        cursor.execute(f"DROP TABLE {_TABLE}")


def release_entries(release: Release, *, records_as_text: bool = False) -> list[dict]:
    """The frozen items of ``release`` in release order (what every export writes).

    ``records_as_text``: each record as its JSON text, for a writer that parses it where it writes (the ClinIQLink
    files are written by parallel processes, which then parse in parallel too)."""
    return _entries(ReleaseItem._meta.db_table, "WHERE release_id = %s", [release.pk], records_as_text)


def _entries(table: str, where: str, params: list, records_as_text: bool = False) -> list[dict]:
    # A plain cursor rather than .values(): at 50,000 rows the ORM's per-row conversion cost more than the query.
    # Django's PostgreSQL backend hands jsonb over as text (JSONField decodes it itself); decoded the same way here.
    select = ", ".join(f"{c}::text" if c in _JSON_COLUMNS else c for c in ENTRY_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {select} FROM {table} {where} ORDER BY position", params)
        rows = cursor.fetchall()
    record_at, nuggets_at = ENTRY_COLUMNS.index("record"), ENTRY_COLUMNS.index("nuggets")
    entries = []
    for row in rows:
        entry = dict(zip(ENTRY_COLUMNS, row, strict=True))
        entry["record"] = row[record_at] if records_as_text else json.loads(row[record_at])
        entry["nuggets"] = None if row[nuggets_at] is None else json.loads(row[nuggets_at])
        entries.append(entry)
    return entries
