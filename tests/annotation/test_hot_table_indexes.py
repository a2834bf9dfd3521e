"""Every review changes its item's status twice and writes a lease (twice), a review row and several audit entries.
None of those status changes can be a HOT update (the status is indexed), so each writes a new entry into every index
of its table: an index nobody reads costs every review. Fifteen such indexes were half or more of the WAL per
review and a tenth or more of PostgreSQL's CPU (docs/benchmarks.md, capacity). These tests keep them out."""

from __future__ import annotations

import pytest
from django.db import connection

from annotation.models import Assignment, QAItem, Review
from annotation.selectors.items import item_list
from portal.models import AuditEntry

pytestmark = pytest.mark.django_db

HOT_TABLES = [model._meta.db_table for model in (QAItem, Assignment, Review, AuditEntry)]


def _indexes(table: str) -> list[tuple[str, str, list[str], bool, bool, str]]:
    """(name, access method, key columns, unique, partial, definition) of each index on ``table``."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.relname, am.amname,
                   ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true) FROM generate_series(1, i.indnkeyatts) k),
                   i.indisunique, i.indpred IS NOT NULL, pg_get_indexdef(i.indexrelid)
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
            WHERE i.indrelid = %s::regclass ORDER BY c.relname""",
            [table],
        )
        return cursor.fetchall()


@pytest.mark.parametrize("table", HOT_TABLES)
def test_no_pattern_ops_twins_on_the_tables_a_review_writes(table):
    """Django gives every CharField with db_index or unique=True a second, varchar_pattern_ops index (for LIKE
    'prefix%'); nothing in the portal searches these columns by prefix."""
    twins = [name for name, _, _, _, _, definition in _indexes(table) if "pattern_ops" in definition]
    assert twins == []


@pytest.mark.parametrize("table", HOT_TABLES)
def test_no_index_repeats_the_leading_columns_of_another(table):
    """A plain index on (a) is served by one on (a, b): the second index on the same leading columns only costs
    writes. Unique and partial indexes are exempt (they enforce a rule, or cover other rows)."""
    indexes = _indexes(table)
    redundant = [
        (name, other)
        for name, method, columns, unique, partial, _ in indexes
        if method == "btree" and not unique and not partial
        for other, other_method, other_columns, _, other_partial, _ in indexes
        if other != name
        and other_method == "btree"
        and not other_partial
        and other_columns[: len(columns)] == columns
        and (len(other_columns) > len(columns) or other < name)
    ]
    assert redundant == []


def test_the_items_table_has_only_btree_indexes():
    """A GIN or GiST index costs far more per write than a btree one (the trigram index on the question did: it
    more than doubled the WAL of a status change); one on this table needs a query that uses it and a measurement
    of the review loop with it."""
    assert {method for _, method, *_ in _indexes(QAItem._meta.db_table)} == {"btree"}


def test_the_item_search_still_finds_a_question_close_in_wording(sample_items):
    """The trigram index is gone, not the search it was meant for: a near miss of a question's words still finds it
    (pg_trgm's word similarity, computed per row)."""
    item = QAItem.objects.filter(question__icontains="the").order_by("id").first()
    word = max(item.question.split(), key=len).strip("?.,;:()")
    near = word[:-1] + ("x" if word[-1] != "x" else "y")
    searched = (item.uid, item.question, item.answer, item.correct_answer)
    assert all(near.lower() not in text.lower() for text in searched) and item.paragraph_id != near
    assert item in item_list(q=near)


def test_analyze_leaves_out_the_items_text_and_json_columns():
    """Autovacuum analyses the items table every half minute or so under review load; no query uses the statistics
    of its text and JSON columns, which were half of each ANALYZE (migration 0015 says more). A new such column needs
    its line in a migration like that one."""
    from django.db.models import JSONField, TextField

    wide = sorted(f.column for f in QAItem._meta.concrete_fields if isinstance(f, TextField | JSONField))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname, coalesce(attstattarget, -1) FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0"
            " AND NOT attisdropped",
            [QAItem._meta.db_table],
        )
        targets = dict(cursor.fetchall())
    assert wide and {column: targets[column] for column in wide} == dict.fromkeys(wide, 0)
    assert targets["status"] == -1  # the columns queries filter on keep the default
