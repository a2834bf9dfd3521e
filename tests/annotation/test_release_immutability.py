"""The database itself refuses every change to a frozen release, checked with raw SQL on a connection of its
own (as any client would): UPDATE, DELETE, TRUNCATE (also by cascade), INSERT of items into a frozen release,
unfreezing; and a release cannot be committed unfrozen. The freeze itself still inserts its items."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from django.db import transaction

from annotation.models import QAItem, Release, ReleaseItem
from annotation.services.imports import items_import
from annotation.services.releases import release_freeze
from portal.dbtools import database_url

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def frozen():
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary")
    return release_freeze(name="locked")


def _refused(sql: str, params=()) -> None:
    with psycopg.connect(database_url(), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="releases are immutable"):
            conn.execute(sql, params)


def _unchanged(release: Release) -> None:
    fresh = Release.objects.get(pk=release.pk)
    assert fresh.note == "" and fresh.frozen and fresh.checksum == release.checksum
    assert ReleaseItem.objects.filter(release=release).count() == release.item_count == 35


def test_insert_into_a_frozen_release_is_refused(frozen):
    other_item = QAItem.objects.create(
        uid="extra", qa_type="true_false", question="q", raw={}, batch=QAItem.objects.first().batch
    )
    _refused(
        "INSERT INTO annotation_releaseitem (release_id, position, item_id, uid, qa_type, record, final_verdict,"
        " final_source, review_count) VALUES (%s, 999, %s, 'extra', 'true_false', '{}', 'correct', 'primary', 0)",
        (frozen.pk, other_item.pk),
    )
    _unchanged(frozen)


@pytest.mark.parametrize(
    "sql",
    [
        "TRUNCATE annotation_releaseitem",
        "TRUNCATE annotation_release CASCADE",
        "TRUNCATE annotation_qaitem CASCADE",  # cascades to the release's items
    ],
)
def test_truncate_is_refused(frozen, sql):
    _refused(sql)
    _unchanged(frozen)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE annotation_release SET note = 'changed' WHERE id = %s",
        "UPDATE annotation_release SET frozen = false WHERE id = %s",
        "UPDATE annotation_release SET frozen = true WHERE id = %s",
        "UPDATE annotation_releaseitem SET final_relevance = 1 WHERE release_id = %s",
        "DELETE FROM annotation_releaseitem WHERE release_id = %s",
        "DELETE FROM annotation_release WHERE id = %s",
    ],
)
def test_update_and_delete_are_still_refused(frozen, sql):
    _refused(sql, (frozen.pk,))
    _unchanged(frozen)


def test_a_release_left_unfrozen_cannot_be_committed(frozen):
    with psycopg.connect(database_url()) as conn:
        conn.execute(
            "INSERT INTO annotation_release (name, version, note, rule, item_count, manifests, checksum, report,"
            " csv_cells, created_at, frozen) VALUES ('sneaky', 1, '', '{}', 0, '{}', '', '{}', 'guarded', now(), false)"
        )
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="not frozen"):
            conn.commit()
    assert not Release.objects.filter(name="sneaky").exists()


def test_the_freeze_inserts_its_items_also_inside_an_outer_transaction(frozen):
    with transaction.atomic():
        second = release_freeze(name="nested", rule={"qa_types": ["list"]})
    assert second.frozen and second.items.count() == second.item_count == 5
    assert Release.objects.get(pk=second.pk).frozen
