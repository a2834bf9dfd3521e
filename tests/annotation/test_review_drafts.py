"""Drafts of the review page on the server: owner only, restored on the page, cleared when the lease ends, CSRF."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import ReviewDraft
from annotation.services.judgement_exports import judgement_rows
from annotation.services.queue import assignment_next
from annotation.services.review_drafts import review_draft_get, review_draft_save
from portal.errors import Conflict, DomainError, NotFound

pytestmark = pytest.mark.django_db

DRAFT = {"verdict": "incorrect", "relevance": "2", "comment": "Dose is per kg <b>not</b> total", "saved": 1700000000000}


def _post(client, assignment, data, **extra):
    return client.post(
        reverse("review_draft", args=[assignment.pk]), json.dumps(data), content_type="application/json", **extra
    )


def test_a_saved_draft_is_restored_on_the_owners_page(client, sample_items, config, reviewer):
    assignment = assignment_next(reviewer=reviewer)
    client.force_login(reviewer)
    assert _post(client, assignment, DRAFT).status_code == 200
    assert client.get(reverse("review_draft", args=[assignment.pk])).json()["draft"]["comment"] == DRAFT["comment"]
    page = client.get(reverse("review_assignment", args=[assignment.pk])).content.decode()
    assert "data-server-draft=" in page
    assert "&lt;b&gt;not&lt;/b&gt;" in page and "<b>not</b>" not in page  # escaped into the attribute


def test_only_the_owner_reads_or_writes_a_draft(client, sample_items, config, make_user, reviewer):
    assignment = assignment_next(reviewer=reviewer)
    review_draft_save(reviewer=reviewer, assignment_id=assignment.pk, data=DRAFT)
    other = make_user("reviewer", "organizer", "adjudicator")
    client.force_login(other)
    assert client.get(reverse("review_draft", args=[assignment.pk])).status_code == 404
    assert _post(client, assignment, {"comment": "overwritten"}).status_code == 404
    assert review_draft_get(reviewer=reviewer, assignment_id=assignment.pk)["comment"] == DRAFT["comment"]
    with pytest.raises(NotFound):
        review_draft_get(reviewer=other, assignment_id=assignment.pk)


def test_the_draft_endpoint_enforces_csrf(sample_items, config, reviewer):
    assignment = assignment_next(reviewer=reviewer)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(reviewer)
    assert _post(browser, assignment, DRAFT).status_code == 403
    assert not ReviewDraft.objects.exists()
    browser.get(reverse("review_assignment", args=[assignment.pk]))  # sets the CSRF cookie, as the page does
    token = browser.cookies["csrftoken"].value
    assert _post(browser, assignment, DRAFT, HTTP_X_CSRFTOKEN=token).status_code == 200


def test_submitting_the_review_clears_the_draft_and_a_late_save_is_refused(client, sample_items, config, reviewer):
    assignment = assignment_next(reviewer=reviewer)
    client.force_login(reviewer)
    _post(client, assignment, DRAFT)
    form = {"idempotency_key": assignment.idempotency_key, "verdict": "correct", "relevance": "5"}
    assert client.post(reverse("review_assignment", args=[assignment.pk]), form).status_code == 302
    assert not ReviewDraft.objects.exists()
    assert _post(client, assignment, DRAFT).status_code == 409  # a debounced save arriving after the submit
    assert not ReviewDraft.objects.exists()
    with pytest.raises(Conflict):
        review_draft_save(reviewer=reviewer, assignment_id=assignment.pk, data=DRAFT)


def test_filing_feedback_instead_clears_the_draft(client, sample_items, config, reviewer):
    assignment = assignment_next(reviewer=reviewer)
    client.force_login(reviewer)
    _post(client, assignment, DRAFT)
    form = {"idempotency_key": assignment.idempotency_key, "text": "The excerpt is cut off."}
    assert client.post(reverse("review_feedback", args=[assignment.pk]), form).status_code == 302
    assert not ReviewDraft.objects.exists()


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"verdict": "maybe"}, "verdict"),
        ({"relevance": "7"}, "relevance"),
        ({"comment": ["a"]}, "comment"),
        ({"secret": "x"}, "secret"),
        ([1, 2], "JSON object"),
    ],
)
def test_a_malformed_draft_is_refused_naming_the_field(client, sample_items, config, reviewer, data, field):
    assignment = assignment_next(reviewer=reviewer)
    client.force_login(reviewer)
    response = _post(client, assignment, data)
    assert response.status_code == 400 and field in response.json()["detail"]
    assert not ReviewDraft.objects.exists()
    with pytest.raises(DomainError):
        review_draft_save(reviewer=reviewer, assignment_id=assignment.pk, data=data)


def test_broken_json_is_a_clear_400(client, sample_items, config, reviewer):
    assignment = assignment_next(reviewer=reviewer)
    client.force_login(reviewer)
    response = client.post(reverse("review_draft", args=[assignment.pk]), "{nope", content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_draft"


def test_a_draft_never_reaches_the_judgement_export(sample_items, config, reviewer, review):
    assignment = assignment_next(reviewer=reviewer)
    review_draft_save(reviewer=reviewer, assignment_id=assignment.pk, data=DRAFT)
    other = assignment_next(reviewer=reviewer)
    assert other.pk == assignment.pk
    review(assignment, "correct", 5, comment="final words")
    review_draft_save(reviewer=reviewer, assignment_id=assignment_next(reviewer=reviewer).pk, data=DRAFT)
    assert not any(DRAFT["comment"] in str(row) for row in judgement_rows())


def test_a_dispute_sent_through_the_api_clears_the_draft(sample_items, config, reviewer):
    from rest_framework.test import APIClient

    assignment = assignment_next(reviewer=reviewer)
    review_draft_save(reviewer=reviewer, assignment_id=assignment.pk, data=DRAFT)
    api = APIClient()
    api.force_authenticate(reviewer)
    body = {"idempotency_key": str(assignment.idempotency_key), "category": "ambiguous", "text": "Two answers fit."}
    response = api.post(f"/api/review/assignments/{assignment.pk}/dispute/", body, format="json")
    assert response.status_code == 201, response.content
    assert not ReviewDraft.objects.exists()


@pytest.mark.parametrize("comment", ["a\u0000b", "\ud800", "x" * 2_000_000])
def test_a_draft_with_text_the_database_cannot_store_is_a_clear_400(client, sample_items, config, reviewer, comment):
    """The draft body is read by the same strict loader as API bodies: a NUL or a lone surrogate in a comment was a
    500 (jsonb refuses them) before."""
    assignment = assignment_next(reviewer=reviewer)
    client.force_login(reviewer)
    body = json.dumps({**DRAFT, "comment": comment})
    response = client.post(reverse("review_draft", args=[assignment.pk]), body, content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_draft"
    assert not ReviewDraft.objects.exists()
