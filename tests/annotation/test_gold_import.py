"""Gold items in bulk: a CSV / JSON file, all or nothing, with errors naming file, record and field."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotation.models import GoldItem
from annotation.services.gold import gold_import
from annotation.services.queue import assignment_next
from portal.importing import ImportProblem
from portal.models import AuditEntry

pytestmark = pytest.mark.django_db


def _csv(tmp_path, rows: list[str], name: str = "gold.csv"):
    path = tmp_path / name
    path.write_text("uid,expected_verdict,planted_error,note\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_csv_marks_every_listed_item(sample_items, organizer, tmp_path):
    a, b = sample_items[0], sample_items[1]
    path = _csv(tmp_path, [f"{a.uid},correct,,", f"{b.uid},incorrect,yes,answer swapped to the wrong drug"])
    assert gold_import(path=path, by=organizer) == {"created": 2, "updated": 0}
    golds = {g.item_id: g for g in GoldItem.objects.all()}
    assert (golds[a.pk].expected_verdict, golds[a.pk].planted_error) == ("correct", False)
    assert (golds[b.pk].expected_verdict, golds[b.pk].planted_error) == ("incorrect", True)
    assert golds[b.pk].note == "answer swapped to the wrong drug"
    assert AuditEntry.objects.filter(action="gold_marked").count() == 2


def test_reimporting_updates_instead_of_duplicating(sample_items, organizer, tmp_path):
    uid = sample_items[0].uid
    gold_import(path=_csv(tmp_path, [f"{uid},correct,,"]), by=organizer)
    result = gold_import(path=_csv(tmp_path, [f"{uid},cannot_tell,,"], "again.csv"), by=organizer)
    assert result == {"created": 0, "updated": 1}
    assert GoldItem.objects.get().expected_verdict == "cannot_tell"


def test_a_json_array_works_too(sample_items, organizer, tmp_path):
    path = tmp_path / "gold.json"
    path.write_text(json.dumps([{"uid": sample_items[2].uid, "expected_verdict": "incorrect", "planted_error": True}]))
    assert gold_import(path=path, by=organizer)["created"] == 1
    assert GoldItem.objects.get().planted_error is True


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ("{uid},maybe,,", "expected_verdict", "is not one of correct, incorrect, cannot_tell"),
        ("{uid},correct,perhaps,", "planted_error", "is not true or false"),
        (",correct,,", "uid", "missing or empty"),
        ("no-such-item,correct,,", "uid", "no item with uid 'no-such-item'"),
    ],
)
def test_a_bad_record_refuses_the_whole_file_and_names_it(sample_items, organizer, tmp_path, row, field, message):
    good = f"{sample_items[0].uid},correct,,"
    path = _csv(tmp_path, [good, row.format(uid=sample_items[1].uid)])
    with pytest.raises(ImportProblem) as caught:
        gold_import(path=path, by=organizer)
    assert caught.value.as_dict() == {"file": "gold.csv", "record": 2, "field": field, "message": caught.value.detail}
    assert message in str(caught.value) and str(caught.value).startswith("gold.csv, record 2, field")
    assert not GoldItem.objects.exists()  # the good first record was not kept either


def test_an_item_already_in_review_cannot_become_gold_and_nothing_is_marked(
    sample_items, config, organizer, reviewer, tmp_path
):
    lease = assignment_next(reviewer=reviewer)
    untouched = next(item for item in sample_items if item.pk != lease.item_id)  # the seeded queue picks any item
    path = _csv(tmp_path, [f"{untouched.uid},correct,,", f"{lease.item.uid},correct,,"])
    with pytest.raises(ImportProblem, match=r"gold.csv, record 2, field 'uid': item .* is already in review"):
        gold_import(path=path, by=organizer)
    assert not GoldItem.objects.exists()


def test_duplicate_uids_and_missing_columns_are_refused(sample_items, organizer, tmp_path):
    uid = sample_items[0].uid
    with pytest.raises(ImportProblem, match=r"record 2, field 'uid': duplicate uid .* \(also record 1\)"):
        gold_import(path=_csv(tmp_path, [f"{uid},correct,,", f"{uid},incorrect,,"]), by=organizer)
    bare = tmp_path / "bare.csv"
    bare.write_text("uid\nx\n")
    with pytest.raises(ImportProblem, match="CSV header lacks column"):
        gold_import(path=bare, by=organizer)


def test_command_and_dashboard_upload(sample_items, organizer, organizer_client, tmp_path, capsys):
    call_command("import_gold", str(_csv(tmp_path, [f"{sample_items[0].uid},correct,,"])))
    assert "1 new" in capsys.readouterr().out
    with pytest.raises(CommandError, match="absent.csv: no such file"):
        call_command("import_gold", str(tmp_path / "absent.csv"))
    with pytest.raises(CommandError, match="no item was marked"):
        call_command("import_gold", str(_csv(tmp_path, ["nope,correct,,"], "bad.csv")))
    upload = SimpleUploadedFile("more.csv", f"uid,expected_verdict\n{sample_items[1].uid},incorrect\n".encode())
    response = organizer_client.post("/organize/vetting/gold/", {"gold_file": upload})
    assert response.status_code == 302 and GoldItem.objects.count() == 2
    bad = SimpleUploadedFile("worse.csv", b"uid,expected_verdict\nnope,incorrect\n")
    response = organizer_client.post("/organize/vetting/gold/", {"gold_file": bad})
    assert response.status_code == 400 and "worse.csv, record 1, field" in response.content.decode()
    assert GoldItem.objects.count() == 2
