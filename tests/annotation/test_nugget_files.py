"""Nugget import and export: all or nothing, errors naming file / line / field, the round trip."""

from __future__ import annotations

import json

import pytest

from annotation.models import NuggetSet, QAItem
from annotation.services.nugget_files import NuggetImportRefused, nuggets_export, nuggets_import
from annotation.services.nuggets import nugget_next, nugget_validate
from portal.errors import DomainError, NotAllowed
from portal.models import AuditEntry


def line(uid, nuggets=None, **extra):
    nuggets = nuggets or [
        {"id": "n1", "text": "Fact one.", "importance": "vital"},
        {"id": "n2", "text": "Fact two.", "importance": "avoid"},
    ]
    return json.dumps({"item_uid": uid, "nuggets": nuggets, **extra})


@pytest.fixture
def uids(sample_items):
    return [item.uid for item in sample_items[:3]]


def test_import_creates_drafts_and_audits(uids, organizer):
    counts = nuggets_import(source=[line(u) for u in uids], name="drafts.jsonl", actor=organizer)
    assert counts == {"created": 3, "unchanged": 0, "replaced_drafts": 0}
    sets = NuggetSet.objects.filter(item__uid__in=uids)
    assert {(s.status, s.origin, s.import_name) for s in sets} == {("draft", "imported", "drafts.jsonl")}
    assert AuditEntry.objects.filter(action="nuggets_imported").count() == 1
    assert AuditEntry.objects.filter(action="nugget_version_created").count() == 3


def test_only_organizers_import(uids, reviewer):
    with pytest.raises(NotAllowed):
        nuggets_import(source=[line(uids[0])], name="x.jsonl", actor=reviewer)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("not json", "bad.jsonl, line 2"),
        (line("NO-SUCH-ITEM"), "bad.jsonl, line 2, field 'item_uid': no item has the uid 'NO-SUCH-ITEM'"),
        (
            line("{uid}", [{"id": "n1", "text": "A", "importance": "okay"}]),
            "bad.jsonl, line 2, field 'nuggets': mark at least one nugget vital",
        ),
        (
            line(
                "{uid}",
                [{"id": "n1", "text": "A", "importance": "vital"}, {"id": "n2", "text": "a", "importance": "okay"}],
            ),
            "bad.jsonl, line 2, field 'nuggets (entry 2).text': the same text as nugget 1",
        ),
        (
            line("{uid}", [{"id": f"n{i}", "text": f"F{i}", "importance": "vital"} for i in range(31)]),
            "at most 30",
        ),
        (
            line(
                "{uid}",
                [{"id": "n1", "text": "A", "importance": "vital"}, {"id": "n1", "text": "B", "importance": "okay"}],
            ),
            "bad.jsonl, line 2, field 'nuggets (entry 2).id'",
        ),
        (
            line("{uid}", [{"id": "n1", "text": "A", "importance": "crucial"}]),
            "bad.jsonl, line 2, field 'nuggets (entry 1).importance'",
        ),
        (line("{first}"), "is already given on line 1"),
    ],
)
def test_each_hazard_is_refused_naming_line_and_field_and_changes_nothing(uids, organizer, bad, message):
    source = [line(uids[0]), bad.replace("{uid}", uids[1]).replace("{first}", uids[0])]
    with pytest.raises(NuggetImportRefused) as caught:
        nuggets_import(source=source, name="bad.jsonl", actor=organizer)
    assert message in str(caught.value)
    assert not NuggetSet.objects.exists()


def test_disputed_item_is_refused(uids, organizer, make_user):
    nuggets_import(source=[line(uids[0])], name="a.jsonl", actor=organizer)
    validator = make_user("reviewer")
    task = nugget_next(person=validator, stage="validate")
    nugget_validate(task_id=task.pk, person=validator, nuggets=[{"text": "Fact one.", "importance": "vital"}])
    with pytest.raises(NuggetImportRefused) as caught:
        nuggets_import(
            source=[line(uids[0], [{"id": "n1", "text": "X", "importance": "vital"}])], name="b.jsonl", actor=organizer
        )
    assert "wait for an adjudicator" in str(caught.value)


def test_draft_being_validated_is_refused_other_draft_replaced(uids, organizer, reviewer):
    nuggets_import(source=[line(u) for u in uids[:2]], name="a.jsonl", actor=organizer)
    task = nugget_next(person=reviewer, stage="validate")
    busy = task.item.uid
    free = next(u for u in uids[:2] if u != busy)
    new = [{"id": "n1", "text": "Changed.", "importance": "vital"}]
    with pytest.raises(NuggetImportRefused, match="validating"):
        nuggets_import(source=[line(busy, new)], name="b.jsonl", actor=organizer)
    counts = nuggets_import(source=[line(free, new)], name="b.jsonl", actor=organizer)
    assert counts == {"created": 1, "unchanged": 0, "replaced_drafts": 1}
    assert list(NuggetSet.objects.filter(item__uid=free).values_list("version", "status")) == [
        (1, "superseded"),
        (2, "draft"),
    ]


def test_round_trip_import_export_import(uids, organizer, make_user):
    given = [
        line(uids[0], [{"id": "a", "text": 'Üñíçødé fact, with "quotes".', "importance": "vital"}]),
        line(uids[1]),
        line(
            uids[2],
            [
                {"id": "n9", "text": "Only okay?", "importance": "okay"},
                {"id": "n1", "text": "V", "importance": "vital"},
            ],
        ),
    ]
    nuggets_import(source=given, name="in.jsonl", actor=organizer)
    validator = make_user("reviewer")
    nugget_validate(task_id=nugget_next(person=validator, stage="validate").pk, person=validator)
    exported = list(nuggets_export(status="all"))
    records = [json.loads(x) for x in exported]
    assert [r["item_uid"] for r in records] == sorted(uids)
    assert {r["status"] for r in records} == {"draft", "validated"}
    by_uid = {r["item_uid"]: r["nuggets"] for r in records}
    assert by_uid == {json.loads(g)["item_uid"]: json.loads(g)["nuggets"] for g in given}
    validated = [json.loads(x) for x in nuggets_export(status="validated")]
    assert len(validated) == 1 and validated[0]["version"] == 1
    # Importing the export again changes nothing.
    assert nuggets_import(source=exported, name="out.jsonl", actor=organizer) == {
        "created": 0,
        "unchanged": 3,
        "replaced_drafts": 0,
    }
    assert [json.loads(x) for x in nuggets_export(status="all")] == records


def test_export_refuses_unknown_status(db):
    with pytest.raises(DomainError):
        list(nuggets_export(status="drafts"))


def test_import_for_any_item_type(sample_items, organizer):
    tf = QAItem.objects.filter(qa_type="true_false").first()
    assert nuggets_import(source=[line(tf.uid)], name="tf.jsonl", actor=organizer)["created"] == 1


def test_export_of_a_disagreement_imports_again_unchanged(uids, organizer, make_user):
    nuggets_import(source=[line(uids[0])], name="a.jsonl", actor=organizer)
    validator = make_user("reviewer")
    task = nugget_next(person=validator, stage="validate")
    nugget_validate(task_id=task.pk, person=validator, nuggets=[{"text": "Fact one.", "importance": "vital"}])
    exported = list(nuggets_export(status="all"))
    assert json.loads(exported[0])["status"] == "disputed"
    assert nuggets_import(source=exported, name="out.jsonl", actor=organizer)["unchanged"] == 1
