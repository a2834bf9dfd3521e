"""Review pages and API: roles, blinding, idempotent POSTs, the same rules through every door."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Assignment, Dispute, QAItem, Review
from annotation.services.queue import assignment_next

pytestmark = pytest.mark.django_db

SECRET_COMMENT = "PRIMARY-SECRET-COMMENT-7f3a"
# The tick on the review start page that confirms the current guidelines were read (asked before the first item).
READ_GUIDELINES = {"guidelines_read": "on"}


@pytest.fixture
def double_review_setup(sample_items, config, make_user, review):
    """Alice did the primary review (verdict incorrect, a distinctive comment); Bob holds the second review."""
    config.second_share = 1.0
    config.save()
    alice, bob = make_user("reviewer"), make_user("reviewer")
    first = assignment_next(reviewer=alice, qa_type="multi_hop")
    review(first, "incorrect", 2, comment=SECRET_COMMENT)
    second = assignment_next(reviewer=bob, qa_type="multi_hop")
    assert second.item_id == first.item_id
    return alice, bob, first, second


def _api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.parametrize(
    ("role", "url_name", "expected"),
    [
        ("reviewer", "review_next", 200),
        ("ranker", "review_next", 403),
        ("reviewer", "adjudication_queue", 403),
        ("adjudicator", "adjudication_queue", 200),
        ("reviewer", "vetting_dashboard", 403),
        ("organizer", "vetting_dashboard", 200),
        ("organizer", "vetting_progress", 200),
        ("reviewer", "dispute_list", 200),
    ],
)
def test_vetting_pages_by_role(client, make_user, sample_items, role, url_name, expected):
    client.force_login(make_user(role))
    assert client.get(reverse(url_name)).status_code == expected


def test_anonymous_is_sent_to_login(client):
    response = client.get(reverse("review_next"))
    assert response.status_code == 302 and "/accounts/login" in response["Location"]


def test_second_reviewer_cannot_see_first_verdict_in_the_page(client, double_review_setup):
    alice, bob, first, second = double_review_setup
    client.force_login(bob)
    html = client.get(reverse("review_assignment", args=[second.pk])).content.decode()
    assert second.item.question.splitlines()[0][:30] in html
    assert SECRET_COMMENT not in html
    assert "checked" not in html  # no verdict or relevance pre-selected from anyone
    assert alice.email not in html and "in_second_review" not in html and "econd review" not in html


def test_second_reviewer_cannot_see_first_review_through_the_api(double_review_setup):
    alice, bob, first, second = double_review_setup
    api = _api(bob)
    next_body = api.post("/api/review/next/", {}, format="json").content.decode()
    assert str(second.idempotency_key) in next_body
    for url in ["/api/review/next/", "/api/review/progress/", "/api/disputes/"]:
        data = (api.post(url, {}, format="json") if "next" in url else api.get(url)).json()
        if isinstance(data, dict):
            data.pop("guideline", None)  # the codebook explains every verdict; it is the same for everyone
        body = json.dumps(data)
        assert SECRET_COMMENT not in body and "verdict" not in body and alice.email not in body
    for url in [f"/api/adjudication/{first.item.uid}/", f"/api/items/{first.item.uid}/", "/api/vetting/progress/"]:
        assert api.get(url).status_code == 403
    # the primary's assignment is not bob's to submit or read
    response = api.post(
        f"/api/review/assignments/{first.pk}/review/",
        {"idempotency_key": str(first.idempotency_key), "verdict": "correct", "relevance": 5},
        format="json",
    )
    assert response.status_code == 403


def test_reviewer_cannot_open_someone_elses_assignment_page(client, double_review_setup):
    alice, bob, first, second = double_review_setup
    client.force_login(alice)
    assert client.get(reverse("review_assignment", args=[second.pk])).status_code == 404


@pytest.mark.parametrize("route", ["review_assignment", "review_dispute", "review_feedback"])
def test_posting_to_someone_elses_lease_is_a_404_and_stores_nothing(client, double_review_setup, route):
    from annotation.models import Dispute, FeedbackNote, Review

    alice, bob, first, second = double_review_setup
    before = (Review.objects.count(), Dispute.objects.count(), FeedbackNote.objects.count())
    client.force_login(alice)
    form = {
        "idempotency_key": str(second.idempotency_key), "verdict": "correct", "relevance": "5", "comment": "",
        "category": "factual_error", "text": "x", "quote_text": "", "qa_type": "",
    }  # fmt: skip
    assert client.post(reverse(route, args=[second.pk]), form).status_code == 404
    assert (Review.objects.count(), Dispute.objects.count(), FeedbackNote.objects.count()) == before


def test_adjudicator_sees_both_reviews_side_by_side(client, double_review_setup, make_user, review):
    alice, bob, first, second = double_review_setup
    review(second, "correct", 5, comment="looks right")
    client.force_login(make_user("adjudicator"))
    html = client.get(reverse("adjudication_item", args=[first.item.uid])).content.decode()
    assert SECRET_COMMENT in html and "looks right" in html
    api_body = _api(make_user("adjudicator")).get(f"/api/adjudication/{first.item.uid}/").json()
    assert {r["stage"] for r in api_body["reviews"]} == {"primary", "secondary"}


def test_review_form_post_twice_stores_once_and_opens_the_next_item(client, sample_items, config, reviewer):
    config.second_share = 0.0
    config.save()
    client.force_login(reviewer)
    response = client.post(reverse("review_next"), READ_GUIDELINES)
    assignment = Assignment.objects.get(reviewer=reviewer)
    assert response["Location"] == reverse("review_assignment", args=[assignment.pk])
    data = {
        "idempotency_key": str(assignment.idempotency_key),
        "verdict": "correct",
        "relevance": "5",
        "comment": "ok",
        "active_seconds": "12",
    }
    first = client.post(reverse("review_assignment", args=[assignment.pk]), data)
    again = client.post(reverse("review_assignment", args=[assignment.pk]), data)
    assert first.status_code == again.status_code == 302
    assert Review.objects.filter(assignment=assignment).count() == 1
    assert Review.objects.get(assignment=assignment).active_seconds == 12
    assert first["Location"] == again["Location"] != response["Location"]


def test_api_submit_is_idempotent(sample_items, config, reviewer):
    api = _api(reviewer)
    body = api.post("/api/review/next/", {"qa_type": "true_false"}, format="json").json()
    assert "status" not in body["item"] and "stage" not in body
    payload = {"idempotency_key": body["idempotency_key"], "verdict": "correct", "relevance": 4}
    url = f"/api/review/assignments/{body['id']}/review/"
    assert api.post(url, payload, format="json").status_code == 201
    assert api.post(url, payload, format="json").status_code == 201
    assert Review.objects.count() == 1
    bad = api.post(url, {**payload, "idempotency_key": "00000000-0000-0000-0000-000000000000"}, format="json")
    assert bad.status_code == 409


def test_dispute_through_the_page_holds_the_item(client, sample_items, config, reviewer):
    client.force_login(reviewer)
    client.post(reverse("review_next"), READ_GUIDELINES)
    assignment = Assignment.objects.get(reviewer=reviewer)
    response = client.post(
        reverse("review_dispute", args=[assignment.pk]),
        {"idempotency_key": str(assignment.idempotency_key), "category": "ambiguous", "text": "Two answers fit."},
    )
    assert response.status_code == 302
    assert Dispute.objects.get().item_id == assignment.item_id
    assert QAItem.objects.get(pk=assignment.item_id).status == "held"
    assert client.get(reverse("dispute_list")).content.decode().count("dispute-row") == 1


def test_api_dispute_comment_and_adjudication(sample_items, config, make_user):
    alice, judge = make_user("reviewer"), make_user("adjudicator")
    api = _api(alice)
    body = api.post("/api/review/next/", {}, format="json").json()
    dispute = api.post(
        f"/api/review/assignments/{body['id']}/dispute/",
        {"idempotency_key": body["idempotency_key"], "category": "factual_error", "text": "Wrong dose."},
        format="json",
    )
    assert dispute.status_code == 201
    pk = dispute.json()["id"]
    assert api.post(f"/api/disputes/{pk}/comments/", {"text": "see p. 12"}, format="json").status_code == 201
    assert _api(make_user("reviewer")).get(f"/api/disputes/{pk}/").status_code == 404
    uid = body["item"]["uid"]
    assert uid in [row["uid"] for row in _api(judge).get("/api/adjudication/").json()]
    final = _api(judge).post(
        f"/api/adjudication/{uid}/", {"verdict": "incorrect", "relevance": 3, "reason": "Yes, wrong."}, format="json"
    )
    assert final.status_code == 201 and final.json()["status"] == "rejected"
    assert api.get(f"/api/disputes/{pk}/").json()["status"] == "upheld"


def test_organizer_api_pauses_batches_sets_config_and_marks_gold(sample_items, organizer, reviewer):
    api = _api(organizer)
    batch = sample_items[0].batch_id
    assert api.patch(f"/api/batches/{batch}/", {"paused": True, "priority": 3}, format="json").json()["paused"] is True
    assert _api(reviewer).post("/api/review/next/", {}, format="json").status_code == 204
    assert (
        api.patch("/api/vetting/config/", {"second_share": 0.3, "seed": "abc"}, format="json").json()["seed"] == "abc"
    )
    assert api.patch("/api/vetting/config/", {"second_share": 3}, format="json").status_code == 400
    # Larger than the small-integer column: refused as input, not a 500 from the database (found by the API fuzzer).
    for too_many in (1001, 40000, 2147483646):
        refused = api.patch("/api/vetting/config/", {"gold_min_answers": too_many}, format="json")
        assert refused.status_code == 400 and "1000" in refused.content.decode()
    gold = api.post(
        "/api/gold/",
        {"uid": sample_items[1].uid, "expected_verdict": "incorrect", "planted_error": True},
        format="json",
    )
    assert gold.status_code == 201
    assert _api(reviewer).patch(f"/api/batches/{batch}/", {"paused": False}, format="json").status_code == 403
    assert api.get("/api/vetting/progress/").json()["progress"]["batches"][0]["paused"] is True


def test_organizer_dashboard_renders_progress(client, organizer, sample_items, config, reviewer, review):
    review(assignment_next(reviewer=reviewer), "correct", 5)
    client.force_login(organizer)
    html = client.get(reverse("vetting_dashboard")).content.decode()
    assert 'hx-trigger="every 5s"' in html and reviewer.email in html and "test-seed" in html


def test_schema_generates(client, organizer):
    client.force_login(organizer)
    assert client.get("/api/schema/").status_code == 200


def test_organizer_forms_save_settings_pause_batches_and_mark_gold(client, organizer, sample_items, config):
    from annotation.models import GoldItem, ImportBatch, VettingConfig

    client.force_login(organizer)
    settings_form = {
        "seed": "new-seed",
        "second_share": "0.3",
        "relevance_gap": "1",
        "gold_rate": "0.1",
        "gold_min_accuracy": "0.75",
        "gold_min_answers": "4",
    }
    assert client.post(reverse("vetting_dashboard"), settings_form).status_code == 302
    saved = VettingConfig.load()
    assert (saved.seed, saved.second_share, saved.relevance_gap) == ("new-seed", 0.3, 1)
    batch = ImportBatch.objects.get()
    client.post(reverse("vetting_batch", args=[batch.pk]), {"paused": "on", "priority": "7"})
    batch.refresh_from_db()
    assert batch.paused and batch.priority == 7
    client.post(
        reverse("vetting_gold"), {"uid": sample_items[2].uid, "expected_verdict": "incorrect", "planted_error": "on"}
    )
    assert GoldItem.objects.get().item_id == sample_items[2].pk
    assert client.post(reverse("vetting_gold"), {"uid": "nope", "expected_verdict": "correct"}).status_code == 400


def test_adjudicator_page_records_the_final_judgement(client, double_review_setup, make_user, review):
    alice, bob, first, second = double_review_setup
    review(second, "correct", 5)
    client.force_login(make_user("adjudicator"))
    response = client.post(
        reverse("adjudication_item", args=[first.item.uid]),
        {"verdict": "correct", "relevance": "4", "reason": "The excerpt states it."},
    )
    assert response.status_code == 302
    item = QAItem.objects.get(pk=first.item_id)
    assert (item.status, item.final_verdict, item.final_relevance, item.final_source) == (
        "verified",
        "correct",
        4.0,
        "adjudication",
    )
