"""Nugget pages: who may open which, the writing / validating / settling flows, escaping, import and export."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import NuggetSet, NuggetTask, QAItem
from annotation.nugget_workflow import NUGGET_QA_TYPES
from annotation.services.nugget_files import nuggets_import
from annotation.services.nuggets import nugget_next, nugget_validate

HOSTILE = '<script>alert("x")</script> & "quotes"'


@pytest.fixture
def verified(sample_items):
    QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).update(status="verified")
    return list(QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).order_by("pk"))


def login(client, user):
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    ("roles", "url", "expected"),
    [
        (("reviewer",), "/nuggets/", 200),
        (("ranker",), "/nuggets/", 200),
        (("adjudicator",), "/nuggets/", 200),
        (("organizer",), "/nuggets/", 403),
        (("reviewer",), "/nuggets/adjudicate/", 403),
        (("adjudicator",), "/nuggets/adjudicate/", 200),
        (("reviewer",), "/organize/nuggets/", 403),
        (("adjudicator",), "/organize/nuggets/", 403),
        (("organizer",), "/organize/nuggets/", 200),
        (("ranker",), "/organize/nuggets/export/", 403),
        (("organizer",), "/organize/nuggets/export/?status=all", 200),
    ],
)
def test_role_table(db, client, make_user, roles, url, expected):
    assert login(client, make_user(*roles)).get(url).status_code == expected


def test_anonymous_is_sent_to_sign_in(client, db):
    response = client.get("/nuggets/")
    assert response.status_code == 302 and "login" in response["Location"]


def test_write_flow_by_form_keeps_text_on_refusal_and_escapes(verified, client, reviewer):
    login(client, reviewer)
    response = client.post("/nuggets/next/", {"stage": "write"})
    task = NuggetTask.objects.get(person=reviewer)
    assert response["Location"] == f"/nuggets/task/{task.pk}/"
    page = client.get(response["Location"]).content.decode()
    assert "Alt</kbd>+<kbd>1</kbd>" in page and task.item.question.split()[0] in page
    refused = client.post(
        f"/nuggets/task/{task.pk}/",
        {"nugget_id": ["", ""], "nugget_text": [HOSTILE, "  "], "nugget_importance": ["okay", "vital"]},
    )
    body = refused.content.decode()
    assert refused.status_code == 400 and "mark at least one nugget vital" in body
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;quotes&quot;" in body
    assert "<script>alert" not in body
    sent = client.post(
        f"/nuggets/task/{task.pk}/",
        {"nugget_id": ["", ""], "nugget_text": [HOSTILE, "Second fact."], "nugget_importance": ["vital", "avoid"]},
    )
    assert sent.status_code == 302
    draft = NuggetSet.objects.get(item=task.item)
    assert [(n.key, n.text, n.importance) for n in draft.nuggets.all()] == [
        ("n1", HOSTILE, "vital"),
        ("n2", "Second fact.", "avoid"),
    ]


def test_someone_elses_task_is_404(verified, client, make_user):
    one, two = make_user("reviewer"), make_user("reviewer")
    task = nugget_next(person=one, stage="write")
    assert login(client, two).get(f"/nuggets/task/{task.pk}/").status_code == 404


def test_validate_accept_and_change_by_form(verified, client, organizer, make_user):
    uids = [item.uid for item in verified[:2]]
    lines = [
        json.dumps({"item_uid": u, "nuggets": [{"id": "n1", "text": HOSTILE, "importance": "vital"}]}) for u in uids
    ]
    nuggets_import(source=lines, name="x.jsonl", actor=organizer)
    validator = make_user("ranker")
    login(client, validator)
    client.post("/nuggets/next/", {"stage": "validate"})
    task = NuggetTask.objects.get(person=validator, status="active")
    page = client.get(f"/nuggets/task/{task.pk}/").content.decode()
    assert "Accept all as written" in page and "<script>alert" not in page
    client.post(f"/nuggets/task/{task.pk}/", {"decision": "accept"})
    assert NuggetSet.objects.get(pk=task.nugget_set_id).status == "validated"
    second = NuggetTask.objects.get(person=validator, status="active")  # the next draft opened by itself
    client.post(
        f"/nuggets/task/{second.pk}/",
        {
            "decision": "change",
            "nugget_id": ["n1", ""],
            "nugget_text": ["Split one.", "Split two."],
            "nugget_importance": ["vital", "okay"],
            "note": "split",
        },
    )
    assert set(NuggetSet.objects.filter(item_id=second.item_id).values_list("status", flat=True)) == {"disputed"}


def test_adjudication_page_compares_and_settles_and_refuses_participants(verified, client, organizer, make_user):
    uid = verified[0].uid
    nuggets_import(
        source=[json.dumps({"item_uid": uid, "nuggets": [{"id": "n1", "text": "Old <b>", "importance": "vital"}]})],
        name="x.jsonl",
        actor=organizer,
    )
    validator = make_user("reviewer", "adjudicator")
    task = nugget_next(person=validator, stage="validate")
    nugget_validate(task_id=task.pk, person=validator, nuggets=[{"id": "n1", "text": "New", "importance": "vital"}])
    assert login(client, validator).get(f"/nuggets/adjudicate/{uid}/").status_code == 403
    adjudicator = make_user("adjudicator")
    login(client, adjudicator)
    listing = client.get("/nuggets/adjudicate/").content.decode()
    assert uid in listing
    page = client.get(f"/nuggets/adjudicate/{uid}/").content.decode()
    assert "text changed" in page and "Old &lt;b&gt;" in page
    missing_note = client.post(f"/nuggets/adjudicate/{uid}/", {"pick": 1, "note": ""})
    assert missing_note.status_code == 400
    done = client.post(f"/nuggets/adjudicate/{uid}/", {"pick": 1, "note": "the original is right"})
    assert done.status_code == 302
    assert NuggetSet.objects.get(item__uid=uid, status="validated").version == 1
    assert client.get(f"/nuggets/adjudicate/{uid}/").status_code == 404


def test_overview_import_errors_table_and_success(verified, client, organizer):
    login(client, organizer)
    bad = SimpleUploadedFile(
        "bad.jsonl", b'{"item_uid": "nope", "nuggets": [{"id": "n1", "text": "A", "importance": "vital"}]}\n'
    )
    response = client.post("/organize/nuggets/", {"file": bad})
    body = response.content.decode()
    assert response.status_code == 400 and "Nothing was imported" in body and "no item has the uid" in body
    assert "<td>1</td><td><code>item_uid</code></td>" in body
    good_line = json.dumps({"item_uid": verified[0].uid, "nuggets": [{"id": "n1", "text": "A", "importance": "vital"}]})
    good = SimpleUploadedFile("good.jsonl", good_line.encode() + b"\n")
    assert client.post("/organize/nuggets/", {"file": good}).status_code == 302
    page = client.get("/organize/nuggets/").content.decode()
    assert "Imported good.jsonl: 1 new draft" in page and verified[0].uid in page
    exported = b"".join(client.get("/organize/nuggets/export/?status=all").streaming_content).decode()
    assert json.loads(exported)["item_uid"] == verified[0].uid
    detail = client.get(f"/items/{verified[0].uid}/").content.decode()
    assert "Version 1" in detail and "good.jsonl" in detail


def test_home_page_offers_nugget_work_to_experts_only(verified, client, make_user):
    page = login(client, make_user("reviewer")).get("/").content.decode()
    assert 'id="my-nugget-work"' in page and "items without nuggets" in page
    assert 'id="my-nugget-work"' not in login(client, make_user("organizer")).get("/").content.decode()
