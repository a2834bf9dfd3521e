"""Nugget API: the same services and rules as the pages, per role, with errors that name the nugget / line."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.models import NuggetSet, QAItem
from annotation.nugget_workflow import NUGGET_QA_TYPES

LIST = [{"text": "A vital fact.", "importance": "vital"}, {"text": "A claim to avoid.", "importance": "avoid"}]


@pytest.fixture
def verified(sample_items):
    QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).update(status="verified")
    return list(QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).order_by("pk"))


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.parametrize(
    ("roles", "method", "url", "expected"),
    [
        (("organizer",), "post", "/api/nuggets/next/", 403),
        (("reviewer",), "get", "/api/nuggets/disputes/", 403),
        (("adjudicator",), "get", "/api/nuggets/disputes/", 200),
        (("reviewer",), "get", "/api/nuggets/export/", 403),
        (("organizer",), "get", "/api/nuggets/export/", 200),
        (("ranker",), "post", "/api/nuggets/import/", 403),
    ],
)
def test_roles(db, make_user, roles, method, url, expected):
    assert getattr(api(make_user(*roles)), method)(url).status_code == expected


def test_write_validate_adjudicate_through_the_api(verified, make_user):
    writer, validator, adjudicator = make_user("reviewer"), make_user("ranker"), make_user("adjudicator")
    task = api(writer).post("/api/nuggets/next/", {"stage": "write"}, format="json").json()
    assert task["stage"] == "write" and task["item"]["question"] and task["draft"] is None
    refused = api(writer).post(
        f"/api/nuggets/tasks/{task['id']}/draft/", {"nuggets": [{"text": "", "importance": "vital"}]}, format="json"
    )
    assert refused.status_code == 400 and refused.json()["problems"][0] == {
        "nugget": 1,
        "field": "text",
        "detail": "the text is empty",
    }
    draft = api(writer).post(f"/api/nuggets/tasks/{task['id']}/draft/", {"nuggets": LIST}, format="json")
    assert draft.status_code == 201 and draft.json()["nuggets"][0] == {"id": "n1", **LIST[0]}
    vtask = api(validator).post("/api/nuggets/next/", {}, format="json").json()
    assert vtask["stage"] == "validate" and vtask["draft"]["version"] == 1
    changed = api(validator).post(
        f"/api/nuggets/tasks/{vtask['id']}/validate/", {"nuggets": LIST[:1], "note": "drop"}, format="json"
    )
    assert changed.json()["status"] == "disputed" and changed.json()["based_on"] == 1
    disputes = api(adjudicator).get("/api/nuggets/disputes/").json()
    assert [d["version"] for d in disputes] == [1, 2]
    uid = disputes[0]["item_uid"]
    assert api(writer).post(f"/api/nuggets/disputes/{uid}/", {"pick_version": 1, "note": "x"}).status_code == 403
    settled = api(adjudicator).post(f"/api/nuggets/disputes/{uid}/", {"pick_version": 1, "note": "both"}, format="json")
    assert settled.status_code == 200 and settled.json()["status"] == "validated"
    assert NuggetSet.objects.get(item__uid=uid, status="validated").version == 1


def test_import_and_export(verified, organizer):
    client = api(organizer)
    bad = SimpleUploadedFile("n.jsonl", b"\n{oops\n")
    response = client.post("/api/nuggets/import/", {"file": bad}, format="multipart")
    assert response.status_code == 400
    assert response.json()["errors"][0]["line"] == 2 and response.json()["errors"][0]["file"] == "n.jsonl"
    line = json.dumps({"item_uid": verified[0].uid, "nuggets": [{"id": "n1", **LIST[0]}]}).encode()
    ok = client.post("/api/nuggets/import/", {"file": SimpleUploadedFile("n.jsonl", line)}, format="multipart")
    assert ok.status_code == 201 and ok.json()["created"] == 1
    exported = b"".join(client.get("/api/nuggets/export/?status=all").streaming_content)
    assert json.loads(exported)["status"] == "draft"
    assert client.get("/api/nuggets/export/?status=bogus").status_code == 400
