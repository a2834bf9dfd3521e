"""portal.bulk's hot-path writers: the rows save() / update() / delete() write, and writes_deferred's one round trip."""

from __future__ import annotations

import pytest
from django.db import DataError, connection, transaction
from django.db.models import signals
from django.test.utils import CaptureQueriesContext

from annotation.models import Assignment, QAItem, Review, ReviewDraft
from portal.bulk import columns_sql, from_row, insert_rows, row_fields, update_row, writes_deferred
from portal.models import AuditEntry


def _columns(model, pk) -> dict:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {model._meta.db_table} WHERE id = %s", [pk])
        names = [c.name for c in cursor.description]
        return dict(zip(names, cursor.fetchone(), strict=True))


def test_insert_rows_writes_the_row_save_writes(make_user):
    actor = make_user("reviewer")
    fields = {"action": "x_done", "object_type": "annotation.qaitem", "object_id": "7", "note": "n\u2019"}
    values = {"before": {"status": "held", "n": None, "list": [1, "a"]}, "after": None}
    by_save = AuditEntry(actor=actor, **fields, **values)
    by_save.save(force_insert=True)
    mine = [AuditEntry(actor=actor, **fields, **values), AuditEntry(actor=None, **fields, before=[1], after="text")]
    insert_rows(mine)
    assert all(entry.pk and not entry._state.adding for entry in mine)
    assert mine[0].pk < mine[1].pk  # one statement, rows in the order given
    saved, written = _columns(AuditEntry, by_save.pk), _columns(AuditEntry, mine[0].pk)
    for row in (saved, written):
        del row["id"], row["at"]
    assert written == saved
    assert AuditEntry.objects.get(pk=mine[1].pk).after == "text"
    insert_rows([])  # nothing to write is not an error


def test_writes_deferred_sends_the_blocks_writes_in_one_round_trip_at_its_end(make_user):
    actor = make_user("reviewer")
    entries = [AuditEntry(actor=actor, action=f"step_{n}", object_type="t", object_id=str(n)) for n in range(3)]
    with transaction.atomic():
        with CaptureQueriesContext(connection) as queries, writes_deferred():
            insert_rows(entries[:2], returning=False)
            update_row(AuditEntry, 0, {"note": "no such row: nothing changes"})
            insert_rows(entries[2:], returning=False)
            assert AuditEntry.objects.filter(object_type="t").count() == 0  # not sent yet
        assert (
            len([q for q in queries.captured_queries if "portal_auditentry" in q["sql"]]) == 2
        )  # the count, the batch
    stored = AuditEntry.objects.filter(object_type="t").order_by("id").values_list("action", flat=True)
    assert list(stored) == ["step_0", "step_1", "step_2"]  # in the order they were made
    assert all(entry.pk is None for entry in entries)


def test_writes_deferred_sends_nothing_when_the_block_raises_and_raises_a_deferred_statements_error(make_user):
    actor = make_user("reviewer")
    with pytest.raises(ZeroDivisionError), transaction.atomic(), writes_deferred():
        insert_rows([AuditEntry(actor=actor, action="lost", object_type="t", object_id="1")], returning=False)
        raise ZeroDivisionError
    with pytest.raises(DataError), transaction.atomic(), writes_deferred():
        insert_rows([AuditEntry(actor=actor, action="kept?", object_type="t", object_id="2")], returning=False)
        insert_rows([AuditEntry(actor=actor, action="x" * 81, object_type="t", object_id="3")], returning=False)
    assert not AuditEntry.objects.filter(object_type="t").exists()  # the whole transaction rolled back


@pytest.mark.parametrize("model", [AuditEntry, Assignment, Review, QAItem, ReviewDraft])
def test_no_model_written_past_the_orm_has_signal_receivers(model):
    """insert_rows, update_row and delete_where send no model signals: they are only for models nobody listens to."""
    for signal in (signals.pre_save, signals.post_save, signals.pre_delete, signals.post_delete):
        assert not signal.has_listeners(model), f"{signal} has a receiver for {model.__name__}"


def test_row_fields_keep_the_models_order_so_from_row_fills_each_attribute_with_its_own_column():
    """Model.from_db places a partial row's values by the model's field order: whatever order the names are asked
    in, row_fields gives them in that order, and a row read as columns_sql lists them lands attribute by attribute."""
    fields = row_fields(QAItem, only=["held_from", "status", "pk"])
    assert [f.name for f in fields] == ["id", "status", "held_from"]
    assert columns_sql(fields, "i") == "i.id, i.status, i.held_from"
    item = from_row(QAItem, fields, [7, "held", "verified"])
    assert (item.pk, item.status, item.held_from) == (7, "held", "verified")
    assert {"uid", "question"} <= item.get_deferred_fields()
    assert "actor_id" not in [f.attname for f in row_fields(AuditEntry, leave_out=["actor"])]
    assert columns_sql(row_fields(AuditEntry, only=["note"]), "a", prefix="x_") == "a.note AS x_note"


def test_from_row_converts_each_value_as_the_orm_reads_it(db):
    """A JSON column comes from the database as its text; from_row turns it into the list or dict the ORM gives
    (a lease read by hand once answered the API with "options": "[]")."""
    from pathlib import Path

    from annotation.services.imports import items_import

    items_import(paths=[Path(__file__).resolve().parents[2] / "fixtures" / "cliniqlink-sample"])
    item = next(i for i in QAItem.objects.order_by("id") if i.reasoning)
    fields = row_fields(QAItem, only=["pk", "options", "reasoning", "extra", "raw"])
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns_sql(fields)} FROM {QAItem._meta.db_table} WHERE id = %s", [item.pk])
        row = cursor.fetchone()
    assert isinstance(row[2], str)  # what the database driver hands over for jsonb under Django
    read = from_row(QAItem, fields, row)
    orm = QAItem.objects.get(pk=item.pk)
    assert (read.options, read.reasoning, read.extra, read.raw) == (orm.options, orm.reasoning, orm.extra, orm.raw)
    assert isinstance(read.reasoning, list) and read.reasoning
