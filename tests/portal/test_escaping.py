"""Item and answer text containing HTML or script is shown escaped everywhere: item page, review page, ranking
page, admin; downloads are served as attachments with their own content type, never as HTML."""

from __future__ import annotations

import json

import pytest

from annotation.models import QAItem
from annotation.services.imports import items_import
from ranking.services.outputs import outputs_import
from ranking.services.studies import study_create

pytestmark = pytest.mark.django_db

QUESTION = '<script>alert("question")</script> Which drug?'
ANSWER = '<img src=x onerror=alert("answer")> Isoniazid'
RESPONSE = '<script>alert("model")</script><b>bold claim</b>'
RAW_MARKERS = ['<script>alert("question")', "<img src=x onerror", '<script>alert("model")', "<b>bold claim</b>"]


@pytest.fixture
def hostile_item(tmp_path):
    record = {
        "question": QUESTION,
        "answer": ANSWER,
        "type": "short_answer",
        "source": {"isbn": "x", "page": 1, "paragraph_id": "p-hostile"},
    }
    path = tmp_path / "short.json"
    path.write_text(json.dumps([record]))
    items_import(paths=[path])
    return QAItem.objects.get()


def _assert_escaped(html: str) -> None:
    for marker in RAW_MARKERS:
        assert marker not in html, marker
    assert "&lt;script&gt;" in html


def test_item_page_escapes(hostile_item, organizer_client):
    _assert_escaped(organizer_client.get(f"/items/{hostile_item.uid}/").content.decode())


def test_review_page_escapes(hostile_item, client, reviewer):
    client.force_login(reviewer)
    response = client.post("/review/", {"guidelines_read": "on"}, follow=True)
    assert hostile_item.question[:20] in response.content.decode().replace("&lt;", "<").replace("&gt;", ">").replace(
        "&quot;", '"'
    )
    _assert_escaped(response.content.decode())


def test_ranking_page_escapes(hostile_item, client, make_user, organizer, tmp_path):
    path = tmp_path / "o.jsonl"
    path.write_text(json.dumps({"item_uid": hostile_item.uid, "system": "S1", "response": RESPONSE}) + "\n")
    outputs_import(system_name="S1", paths=[path])
    study = study_create(name="xss", systems=["S1"], user=organizer, overlap=1).study
    client.force_login(make_user("ranker"))
    response = client.post(f"/rank/studies/{study.pk}/next/", follow=True)  # lease it, land on the page
    html = response.content.decode()
    assert "&lt;b&gt;bold claim&lt;/b&gt;" in html
    _assert_escaped(html)


def test_admin_escapes(hostile_item, client, organizer):
    organizer.is_staff = True
    organizer.is_superuser = True
    organizer.save()
    client.force_login(organizer)
    html = client.get("/admin/annotation/qaitem/?q=Which").content.decode()
    assert hostile_item.uid in html
    _assert_escaped(html)


def test_downloads_are_attachments_not_html(hostile_item, organizer_client):
    QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5.0)
    from annotation.services.releases import release_freeze

    release = release_freeze(name="xss")
    for fmt in ("cliniqlink", "csv"):
        response = organizer_client.get(f"/releases/{release.label}/download/{fmt}/")
        assert response["Content-Type"] == "application/zip"
        assert response["Content-Disposition"].startswith("attachment;")
        assert response["X-Content-Type-Options"] == "nosniff"


def test_unknown_download_format_is_not_reflected(hostile_item, organizer_client):
    """The format comes from the URL: an error page that echoed it would run the attacker's markup."""
    QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5.0)
    from annotation.services.releases import release_freeze

    release = release_freeze(name="reflect")
    response = organizer_client.get(f"/releases/{release.label}/download/<svg onload=alert(1)>/")
    assert response.status_code == 404
    assert b"<svg onload" not in response.content
