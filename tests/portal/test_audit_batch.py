"""audit_batch: the entries recorded inside it are written in one INSERT at its end, in order, with the transaction
that made the changes; nothing of a block that raised is written."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from portal.audit import audit_batch, audit_record
from portal.models import AuditEntry

pytestmark = pytest.mark.django_db


def test_entries_are_written_in_one_statement_at_the_end_in_order(organizer):
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        with audit_batch():
            for n in range(3):
                audit_record(actor=organizer, obj=("test.thing", str(n)), action=f"step_{n}")
            assert AuditEntry.objects.filter(action__startswith="step_").count() == 0  # not yet written
    inserts = [q for q in queries.captured_queries if q["sql"].startswith('INSERT INTO "portal_auditentry"')]
    assert len(inserts) == 1
    entries = AuditEntry.objects.filter(action__startswith="step_")
    assert [(e.action, e.object_id, e.actor_id) for e in entries] == [
        ("step_0", "0", organizer.pk),
        ("step_1", "1", organizer.pk),
        ("step_2", "2", organizer.pk),
    ]


def test_nothing_recorded_in_a_block_that_raised_is_written(organizer):
    with pytest.raises(ValueError), transaction.atomic(), audit_batch():
        audit_record(actor=organizer, obj=("test.thing", "1"), action="lost_with_the_change")
        raise ValueError("the change failed")
    assert not AuditEntry.objects.filter(action="lost_with_the_change").exists()
    audit_record(actor=organizer, obj=("test.thing", "2"), action="after_the_failure")  # no batch left open
    assert AuditEntry.objects.filter(action="after_the_failure").exists()


def test_a_batch_inside_a_batch_is_written_by_the_outer_one(organizer):
    with transaction.atomic(), audit_batch():
        with audit_batch():
            audit_record(actor=organizer, obj=("test.thing", "1"), action="inner")
        assert not AuditEntry.objects.filter(action="inner").exists()
    assert AuditEntry.objects.filter(action="inner").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_batch_outside_a_transaction_is_refused():
    with pytest.raises(RuntimeError, match="inside the transaction"), audit_batch():
        pass
