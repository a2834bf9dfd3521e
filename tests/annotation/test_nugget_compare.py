"""Usability F31: the adjudicator's "two versions" table marks the words that changed, calls a nugget "moved" only
when its place among the shared nuggets changed (not when one was inserted above it), and keeps each change label
whole (one label per line, never broken inside a word)."""

from __future__ import annotations

import json

import pytest

from annotation.models import NuggetSet, QAItem
from annotation.nugget_workflow import NUGGET_QA_TYPES
from annotation.selectors.nuggets import TextPiece, nuggets_compared, text_pieces
from annotation.services.nugget_files import nuggets_import
from annotation.services.nuggets import nugget_next, nugget_validate

DRAFT = [
    {"id": "n1", "text": "Metformin is first-line.", "importance": "vital"},
    {"id": "n2", "text": "It can cause <lactic> acidosis.", "importance": "okay"},
    {"id": "n3", "text": "Check kidney function.", "importance": "okay"},
]


@pytest.fixture
def disputed(sample_items, organizer, make_user):
    """A draft, and a validator's version that inserts a nugget above n2, appends a sentence to n2's text and
    leaves n3 as it was: the two versions go to an adjudicator."""
    QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).update(status="verified")
    uid = QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).order_by("pk").first().uid
    nuggets_import(source=[json.dumps({"item_uid": uid, "nuggets": DRAFT})], name="x.jsonl", actor=organizer)
    validator = make_user("reviewer")
    task = nugget_next(person=validator, stage="validate")
    changed = [
        DRAFT[0],
        {"id": "", "text": "Inserted fact.", "importance": "okay"},
        {**DRAFT[1], "text": DRAFT[1]["text"] + " Rare but fatal."},
        DRAFT[2],
    ]
    nugget_validate(task_id=task.pk, person=validator, nuggets=changed, note="added a sentence")
    return uid


def test_text_pieces_mark_only_the_words_that_differ():
    left, right = text_pieces("Give 5 mg daily.", "Give 10 mg daily. Rare but fatal.")
    assert left == [TextPiece("same", "Give"), TextPiece("removed", "5"), TextPiece("same", "mg daily.")]
    assert TextPiece("added", "10") in right and any(p.kind == "added" and "fatal." in p.text for p in right)
    assert [p.kind for p in text_pieces("Same words.", "Same words.")[1]] == ["same"]


def test_inserted_nugget_does_not_move_the_ones_below(disputed):
    first, second = NuggetSet.objects.filter(item__uid=disputed).order_by("version")
    rows = {row.key: row for row in nuggets_compared(first, second)}
    assert rows["n1"].changes == []
    assert rows["n2"].changes == ["text changed"]
    assert rows["n3"].changes == []
    assert [row.changes for key, row in rows.items() if key not in ("n1", "n2", "n3")] == [["added"]]


def test_swapped_nuggets_are_moved(sample_items, organizer, make_user):
    QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).update(status="verified")
    uid = QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).order_by("pk").first().uid
    nuggets_import(source=[json.dumps({"item_uid": uid, "nuggets": DRAFT})], name="x.jsonl", actor=organizer)
    validator = make_user("reviewer")
    task = nugget_next(person=validator, stage="validate")
    nugget_validate(task_id=task.pk, person=validator, nuggets=[DRAFT[1], DRAFT[0], DRAFT[2]])
    first, second = NuggetSet.objects.filter(item__uid=uid).order_by("version")
    rows = {row.key: row for row in nuggets_compared(first, second)}
    assert rows["n1"].changes == ["moved"] and rows["n2"].changes == ["moved"] and rows["n3"].changes == []


def test_page_marks_the_appended_words_escaped(disputed, client, make_user):
    client.force_login(make_user("adjudicator"))
    page = client.get(f"/nuggets/adjudicate/{disputed}/").content.decode()
    table = page[page.index('id="nugget-compare"') : page.index("</table>")]
    assert '<ins title="Not in version 1">Rare but fatal.</ins>' in table
    assert "&lt;lactic&gt; acidosis." in table and "<lactic>" not in table
    assert table.count('<span class="change">') == 2  # "text changed" on n2, "added" on the inserted one
    assert "moved" not in table
