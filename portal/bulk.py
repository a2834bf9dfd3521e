"""Writing rows without the ORM's statement compiler.

- Many rows at once with PostgreSQL COPY, which is faster than multi-row INSERT for wide rows with JSON (a large
  import, a release of many frozen items; docs/benchmarks.md).
- Rows read by hand-written statements into model instances (:func:`row_fields`, :func:`columns_sql`,
  :func:`from_row`).
- The few rows of a hot-path request (the review loop: a lease, a review, an item's move, audit entries) with
  statements written once per model and set of columns, and, inside :func:`writes_deferred`, sent together in one
  round trip when the block ends. On that path the ORM spent longer compiling each statement than PostgreSQL spent
  running it, and every statement was a round trip of its own.

Values are prepared by each field exactly as ``save()`` and ``update()`` prepare them. No model signals are sent:
these are for models nobody listens to (``tests/portal/test_bulk.py`` holds that for the models written here).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import TypeVar, cast

from django.db import connection, models
from django.db.models.expressions import Col
from psycopg.types.json import Jsonb

_M = TypeVar("_M", bound=models.Model)


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


def row_fields(
    model: type[models.Model], *, only: Iterable[str] = (), leave_out: Iterable[str] = ()
) -> tuple[models.Field, ...]:
    """The model's columns a hand-written statement reads (all, ``only`` these or all but ``leave_out``: field names,
    attribute names or "pk"), in the model's own field order.

    That order matters: ``Model.from_db`` places a partial row's values by the model's field order, not by the
    names it is given, so a row read in another order puts one column's value into another attribute. Read the
    columns as :func:`columns_sql` lists them and turn the row into an instance with :func:`from_row`."""
    meta = model._meta
    wanted = {meta.pk.name if name == "pk" else name for name in only}
    unwanted = set(leave_out)
    return tuple(
        f
        for f in meta.concrete_fields
        if (not wanted or wanted & {f.name, f.attname}) and not unwanted & {f.name, f.attname}
    )


def columns_sql(fields: Iterable[models.Field], alias: str = "", *, prefix: str = "") -> str:
    """The select list of ``fields`` (of :func:`row_fields`), qualified by the table ``alias`` and, with ``prefix``,
    each aliased as ``prefix`` + its column."""
    qualifier = f"{alias}." if alias else ""
    return ", ".join(f"{qualifier}{f.column}" + (f" AS {prefix}{f.column}" if prefix else "") for f in fields)


def from_row(model: type[_M], fields: tuple[models.Field, ...], values: Sequence) -> _M:
    """The instance of a row read as :func:`columns_sql` lists ``fields``; the fields not read are deferred.

    Each value goes through its field's database converters first, as the ORM's compiler sends it: a JSON column
    comes from the database as its text (Django reads ``jsonb`` as text) and becomes the list or dict here."""
    converters = _converters(fields)
    if converters:
        values = list(values)
        for at, column, convert in converters:
            values[at] = convert(values[at], column, connection)
    return model.from_db("default", _attnames(fields), values)


@cache
def _converters(fields: tuple[models.Field, ...]) -> tuple[tuple[int, Col, Callable], ...]:
    """(position, column, converter) of every field whose database value needs converting (JSON, for one): the
    backend's converters, then the field's own, each called with the column as the compiler calls them."""
    found = []
    for at, field in enumerate(fields):
        column = field.get_col(field.model._meta.db_table)
        for convert in [*connection.ops.get_db_converters(column), *field.get_db_converters(connection)]:
            found.append((at, column, convert))
    return tuple(found)


@cache
def _attnames(fields: tuple[models.Field, ...]) -> list[str]:
    return [f.attname for f in fields]


_deferred = threading.local()


@contextmanager
def writes_deferred() -> Iterator[None]:
    """Send the writes that return nothing (:func:`update_row`, :func:`delete_where`, :func:`insert_rows` without
    ``returning``) made inside the block in one round trip when it ends, in the order they were made.

    Only for writes nothing inside the block reads back: a statement in the block sees the rows as they were before
    the deferred writes. Use it inside the transaction that makes the changes; if the block raises, nothing deferred
    in it is sent, and an error of a deferred statement is raised when the block ends. Nested: the outer block
    sends."""
    if getattr(_deferred, "statements", None) is not None:
        yield
        return
    if not connection.in_atomic_block:
        raise RuntimeError("writes_deferred() must run inside the transaction that makes the writes")
    _deferred.statements, _deferred.params = [], []
    try:
        yield
        statements, params = _deferred.statements, _deferred.params
        _deferred.statements = _deferred.params = None
        if statements:
            with connection.cursor() as cursor:
                cursor.execute(";\n".join(statements), params)
    finally:
        _deferred.statements = _deferred.params = None


def _write(sql: str, params: list) -> None:
    """Run a statement that returns nothing, or queue it when a :func:`writes_deferred` block is open."""
    statements = getattr(_deferred, "statements", None)
    if statements is not None:
        statements.append(sql)
        _deferred.params.extend(params)
        return
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def insert_rows(objects: Sequence[models.Model], *, returning: bool = True) -> None:
    """Insert a few unsaved instances of one model with one ``INSERT``, in the caller's transaction: the rows
    ``save()`` would write (``pre_save`` fills ``auto_now_add``, ``get_db_prep_save`` adapts JSON).

    ``returning``: read the new primary keys back onto the instances (one round trip now). Without it the statement
    may wait for the end of a :func:`writes_deferred` block, and the instances keep no primary key unless they were
    given one (taken from the sequence beforehand with :func:`next_id_sql`), which is then written."""
    if not objects:
        return
    model = type(objects[0])
    with_ids = all(obj.pk is not None for obj in objects)  # ids taken beforehand (next_id_sql)
    fields = _insert_fields(model, with_ids=with_ids)
    values = [f.get_db_prep_save(f.pre_save(obj, add=True), connection) for obj in objects for f in fields]
    sql = _insert_sql(model, len(objects), returning=returning, with_ids=with_ids)
    if returning:
        with connection.cursor() as cursor:
            cursor.execute(sql, values)
            for obj, (pk,) in zip(objects, cursor.fetchall(), strict=True):
                obj.pk = pk
    else:
        _write(sql, values)
    for obj in objects:
        obj._state.adding, obj._state.db = False, "default"


def next_id_sql(model: type[models.Model]) -> str:
    """An SQL expression taking a new primary key from the model's sequence, to read in a statement that runs
    anyway: a row inserted with that id (:func:`insert_rows`) can then wait for :func:`writes_deferred` even when
    other rows written with it name it. Ids taken and not used leave gaps, as a rolled-back insert does."""
    return f"nextval(pg_get_serial_sequence('{model._meta.db_table}', '{model._meta.pk.column}'))"


def _insert_fields(model: type[models.Model], *, with_ids: bool = False) -> list[models.Field]:
    return [f for f in model._meta.concrete_fields if (with_ids or not f.primary_key) and not f.generated]


def _quoted(model: type[models.Model], name: str | None = None) -> str:
    """The model's table, or the column of its field ``name``, quoted."""
    if name is None:
        return connection.ops.quote_name(model._meta.db_table)
    field = model._meta.pk if name == "pk" else model._meta.get_field(name)
    return connection.ops.quote_name(cast(str, cast(models.Field, field).column))


@cache
def _insert_sql(model: type[models.Model], rows: int, *, returning: bool, with_ids: bool) -> str:
    fields = _insert_fields(model, with_ids=with_ids)
    columns = ", ".join(_quoted(model, f.name) for f in fields)
    row = f"({', '.join(['%s'] * len(fields))})"
    sql = f"INSERT INTO {_quoted(model)} ({columns}) VALUES {', '.join([row] * rows)}"
    return f"{sql} RETURNING {_quoted(model, 'pk')}" if returning else sql


def update_row(model: type[models.Model], pk: int, values: dict) -> None:
    """``UPDATE`` one row's ``values`` (field names to new values), as ``filter(pk=pk).update(**values)`` writes
    them; deferred inside :func:`writes_deferred`."""
    fields = {name: cast(models.Field, model._meta.get_field(name)) for name in values}
    prepared = [fields[name].get_db_prep_save(value, connection) for name, value in values.items()]
    _write(_update_sql(model, tuple(values)), [*prepared, pk])


@cache
def _update_sql(model: type[models.Model], names: tuple[str, ...]) -> str:
    assignments = ", ".join(f"{_quoted(model, name)} = %s" for name in names)
    return f"UPDATE {_quoted(model)} SET {assignments} WHERE {_quoted(model, 'pk')} = %s"


def delete_where(model: type[models.Model], **equals) -> None:
    """``DELETE`` the rows whose fields equal ``equals`` (attribute names such as ``item_id``), as
    ``filter(**equals).delete()`` would for a model nothing points at (no cascades are run); deferred inside
    :func:`writes_deferred`."""
    names = tuple(equals)
    _write(_delete_sql(model, names), [equals[name] for name in names])


@cache
def _delete_sql(model: type[models.Model], names: tuple[str, ...]) -> str:
    condition = " AND ".join(f"{_quoted(model, name)} = %s" for name in names)
    return f"DELETE FROM {_quoted(model)} WHERE {condition}"
