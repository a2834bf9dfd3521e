"""Organizer pages and API for items: upload through the page and the API (job with progress), browse, filter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import QAItem
from annotation.services.imports import items_import
from portal.models import Job

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "cliniqlink-sample"

pytestmark = pytest.mark.django_db(transaction=True)  # imports are queued with on_commit


def _upload(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (SAMPLE / name).read_bytes(), content_type="application/json")


def test_upload_page_imports_through_a_job_with_progress(organizer_client):
    response = organizer_client.post(
        reverse("import"), {"kind": "items", "format": "cliniqlink", "files": [_upload("TF.json"), _upload("MC.json")]}
    )
    assert response.status_code == 302
    job = Job.objects.get()
    assert response["Location"] == reverse("job", args=[job.pk])
    assert job.status == "succeeded" and job.progress_done == job.progress_total == 10
    assert job.result["created"] == 10
    assert QAItem.objects.count() == 10
    page = organizer_client.get(response["Location"])
    tf, mc = (len(json.loads((SAMPLE / name).read_text())) for name in ("TF.json", "MC.json"))
    # Finished: what it did in a sentence, not a full progress bar.
    assert b'data-status="succeeded"' in page.content and b'role="progressbar"' not in page.content
    assert f"{tf + mc} items imported ({tf} true / false and {mc} multiple choice).".encode() in page.content


def test_bad_upload_fails_the_job_naming_file_record_field_and_imports_nothing(organizer_client):
    bad = SimpleUploadedFile("MC.json", json.dumps([{"type": "multiple_choice", "question": "q"}]).encode())
    organizer_client.post(
        reverse("import"), {"kind": "items", "format": "cliniqlink", "files": [_upload("TF.json"), bad]}
    )
    job = Job.objects.get()
    assert job.status == "failed"
    assert job.error == "MC.json, record 1, field 'source': missing"
    assert QAItem.objects.count() == 0


def test_api_import_returns_a_job_and_item_api_reads_items(organizer_client):
    response = organizer_client.post("/api/imports/", {"files": [_upload("list.json")]}, format="multipart")
    assert response.status_code == 202
    job_id = response.json()["id"]
    job = organizer_client.get(f"/api/jobs/{job_id}/").json()
    assert job["status"] == "succeeded" and job["result"]["created"] == 5
    listing = organizer_client.get("/api/items/?qa_type=list").json()
    assert listing["count"] == 5
    uid = listing["results"][0]["uid"]
    detail = organizer_client.get(f"/api/items/{uid}/").json()
    assert detail["qa_type"] == "list" and detail["answer_list"]


def test_item_browser_filters_by_type_and_searches_text(organizer_client):
    items_import(paths=[SAMPLE])
    page = organizer_client.get(reverse("item_list"), {"qa_type": "multiple_choice"})
    assert page.context["page"].paginator.count == 5
    item = QAItem.objects.filter(qa_type="short_answer").first()
    found = organizer_client.get(reverse("item_list"), {"q": item.question[5:40]})
    assert item in list(found.context["page"])
    detail = organizer_client.get(reverse("item_detail", args=[item.uid]))
    assert detail.status_code == 200 and item.answer.encode() in detail.content


def test_item_text_with_html_is_escaped(organizer_client, tmp_path):
    record = json.loads((SAMPLE / "short.json").read_text())[0]
    record["question"] = "<script>alert('x')</script> What?"
    path = tmp_path / "short.json"
    path.write_text(json.dumps([record]))
    items_import(paths=[path])
    item = QAItem.objects.get()
    content = organizer_client.get(reverse("item_detail", args=[item.uid])).content.decode()
    assert "<script>alert" not in content and "&lt;script&gt;alert" in content


@pytest.mark.parametrize("via", ["page", "api"])
def test_source_passages_upload_runs_the_sources_job(organizer_client, via):
    from annotation.models import SourcePassage

    items_import(paths=[SAMPLE / "short.json"])
    upload = SimpleUploadedFile("sources.csv", (ROOT / "fixtures" / "demo-sources.csv").read_bytes())
    if via == "page":
        assert organizer_client.post(reverse("import"), {"kind": "sources", "files": [upload]}).status_code == 302
    else:
        response = organizer_client.post("/api/imports/", {"kind": "sources", "files": [upload]}, format="multipart")
        assert response.status_code == 202
    job = Job.objects.get()
    assert job.kind == "import_sources" and job.status == "succeeded", job.error
    assert list(job.params["displays"].values()) == ["sources.csv"]
    assert SourcePassage.objects.count() == job.result["created"] > 0
    assert job.result["items_linked"] > 0


def test_several_source_files_import_together_or_not_at_all(organizer_client):
    from annotation.models import SourcePassage

    first = SimpleUploadedFile("a.csv", b"paragraph_id,page,text\npa,1,first file\n")
    second = SimpleUploadedFile("b.json", json.dumps([{"paragraph_id": "pb", "text": "second file"}]).encode())
    organizer_client.post(reverse("import"), {"kind": "sources", "files": [first, second]})
    job = Job.objects.get()
    assert job.status == "succeeded" and job.result["created"] == 2, job.error
    assert set(SourcePassage.objects.values_list("paragraph_id", flat=True)) == {"pa", "pb"}

    good = SimpleUploadedFile("c.csv", b"paragraph_id,text\npc,fine\n")
    bad = SimpleUploadedFile("d.csv", b"paragraph_id,text\npd,fine\n,empty id\n")
    organizer_client.post(reverse("import"), {"kind": "sources", "files": [good, bad]})
    job = Job.objects.latest("created_at")
    assert job.status == "failed" and not job.retryable
    assert job.error == "d.csv, record 2, field 'paragraph_id': missing or empty"
    assert not SourcePassage.objects.filter(paragraph_id="pc").exists()  # the good file was not imported either


@pytest.mark.parametrize(
    ("kind", "name", "content", "error_start"),
    [
        ("items", "TF.json", b"[" * 100_000 + b"]" * 100_000, "TF.json, record 1: nesting deeper than 8 levels"),
        ("items", "TF.json", b'[{"question": "q\\u0000"}]', "TF.json, record 1, field 'question': contains a NUL"),
        ("items", "TF.json", b'[{"uid": ' + b"7" * 5000 + b"}]", "TF.json, record 1, field 'uid': an integer of"),
        ("items", "TF.json", b'[{"page": NaN}]', "TF.json, record 1, field 'page': NaN is not a number"),
        ("sources", "s.csv", b"paragraph_id,text\np1," + b"x" * 140_000 + b"\n", "s.csv, record 1: unreadable CSV"),
    ],
)
def test_hostile_uploads_are_refused_for_their_input_not_as_internal_errors(
    organizer_client, kind, name, content, error_start
):
    upload = SimpleUploadedFile(name, content)
    response = organizer_client.post(reverse("import"), {"kind": kind, "format": "cliniqlink", "files": [upload]})
    assert response.status_code == 302
    job = Job.objects.get()
    assert job.status == "failed" and not job.retryable
    assert job.error.startswith(error_start)
    assert "Internal error" not in job.error


def test_item_page_tells_the_history_in_words(organizer, organizer_client, make_user):
    # Regression: the organizers' item page printed audit records ("gold_marked {'planted_error': False, ...}").
    from annotation.services.gold import gold_mark
    from tests.reviews import done_review

    items_import(paths=[SAMPLE / "TF.json"])
    gold_item, reviewed = QAItem.objects.order_by("id")[:2]
    gold_mark(item=gold_item, expected_verdict="incorrect", by=organizer, planted_error=True)
    done_review(reviewed, make_user("reviewer", email="rev@test.portal"), "primary", "correct", 4)

    gold_page = organizer_client.get(reverse("item_detail", args=[gold_item.uid])).content.decode()
    story = gold_page.split('id="history"')[1]
    assert "Made a gold item" in story and "expected verdict Incorrect, a planted error" in story
    assert "{" not in story and "gold_marked" not in story and "planted_error" not in story

    review_page = organizer_client.get(reverse("item_detail", args=[reviewed.uid])).content.decode()
    story = review_page.split('id="history"')[1]
    assert "First review</strong> by" in story and "Correct, GP relevance 4" in story


def test_items_by_status_follow_the_workflow_order(sample_items):
    from annotation.models import QAItem
    from annotation.selectors.items import item_counts_by_status

    # statuses given in an order that neither the alphabet nor the database would return
    for item, status in zip(sample_items, ["verified", "held", "imported", "rejected", "in_review"], strict=False):
        QAItem.objects.filter(pk=item.pk).update(status=status)
    counts = item_counts_by_status()
    assert list(counts) == ["imported", "in_review", "verified", "rejected", "held"]
    assert counts["imported"] == len(sample_items) - 4
