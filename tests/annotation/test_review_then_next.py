"""``POST /api/review/assignments/<id>/review-then-next/``: the review of a lease and the next lease in one request,
as the review page does. The review is stored whatever happens to the next lease, a retry is answered from what is
stored, and every refusal of the review takes no lease."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.models import Assignment, Review
from portal.api_tokens import api_token_create


@pytest.fixture
def api(reviewer):
    _, key = api_token_create(user=reviewer, name="loop", mfa_verified=False)
    return APIClient(HTTP_AUTHORIZATION=f"Token {key}")


def _then_next(api, lease: dict, **extra):
    body = {"idempotency_key": lease["idempotency_key"], "verdict": "correct", "relevance": 4, **extra}
    return api.post(f"/api/review/assignments/{lease['id']}/review-then-next/", body, format="json")


def test_the_review_is_stored_and_the_next_lease_is_the_one_next_would_give(sample_items, config, api, reviewer):
    config.second_share = 0.0
    config.save()
    lease = api.post("/api/review/next/", {}, format="json").json()
    response = _then_next(api, lease, comment="dose <b>checked</b>")
    assert response.status_code == 201
    body = response.json()
    stored = Review.objects.get(assignment_id=lease["id"])
    assert body["review"] == {
        "assignment": lease["id"],
        "verdict": "correct",
        "cannot_tell_reason": "",
        "relevance": 4,
        "comment": "dose <b>checked</b>",
        "created_at": body["review"]["created_at"],
    }
    assert (stored.verdict, stored.relevance, stored.reviewer_id) == ("correct", 4, reviewer.pk)
    following = body["next"]
    assert following["id"] != lease["id"] and following["item"]["uid"] != lease["item"]["uid"]
    # The next lease is the reviewer's current one: "next" hands the same lease back, in the same shape.
    assert api.post("/api/review/next/", {}, format="json").json() == following


def test_a_retry_returns_the_stored_review_and_the_same_next_lease(sample_items, config, api):
    lease = api.post("/api/review/next/", {}, format="json").json()
    first = _then_next(api, lease).json()
    again = _then_next(api, lease)
    assert again.status_code == 201
    assert again.json() == first
    assert Review.objects.filter(assignment_id=lease["id"]).count() == 1
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 1


def test_when_nothing_is_waiting_the_review_is_stored_and_next_is_null(sample_items, config, api, reviewer):
    config.second_share = 0.0
    config.save()
    lease = api.post("/api/review/next/", {}, format="json").json()
    for _ in range(len(sample_items) - 1):  # review every other item first
        lease = _then_next(api, lease).json()["next"]
    last = _then_next(api, lease)
    assert last.status_code == 201
    assert last.json()["next"] is None
    assert Review.objects.filter(reviewer=reviewer).count() == len(sample_items)


def test_the_type_filter_applies_to_the_next_lease(sample_items, config, api):
    config.second_share = 0.0
    config.save()
    lease = api.post("/api/review/next/", {"qa_type": "true_false"}, format="json").json()
    body = _then_next(api, lease, qa_type="list").json()
    assert lease["item"]["qa_type"] == "true_false" and body["next"]["item"]["qa_type"] == "list"


@pytest.mark.parametrize(
    "change, field",
    [
        ({"verdict": "perhaps"}, "verdict"),
        ({"relevance": 99}, "relevance"),
        ({"idempotency_key": "not-a-uuid"}, "idempotency_key"),
        ({"comment": "a\x00b"}, "comment"),
        ({"qa_type": ["list"]}, "qa_type"),
    ],
)
def test_a_refused_review_takes_no_lease_and_names_the_field(sample_items, config, api, change, field):
    lease = api.post("/api/review/next/", {}, format="json").json()
    response = _then_next(api, lease, **change)
    assert response.status_code == 400
    assert field in str(response.json())
    assert not Review.objects.exists()
    assert list(Assignment.objects.values_list("id", flat=True)) == [lease["id"]]


def test_another_reviewers_lease_is_refused_and_takes_no_lease(sample_items, config, api, make_user):
    from annotation.services.queue import assignment_next

    theirs = assignment_next(reviewer=make_user("reviewer"))
    lease = {"id": theirs.pk, "idempotency_key": str(theirs.idempotency_key)}
    response = _then_next(api, lease)
    assert response.status_code in (403, 404)
    assert not Review.objects.exists()
    assert list(Assignment.objects.values_list("id", flat=True)) == [theirs.pk]


def test_only_reviewers_may_call_it(sample_items, config, make_user):
    _, key = api_token_create(user=make_user("ranker"), name="t", mfa_verified=False)
    response = APIClient(HTTP_AUTHORIZATION=f"Token {key}").post(
        "/api/review/assignments/1/review-then-next/", {}, format="json"
    )
    assert response.status_code == 403


@pytest.mark.parametrize("pk", [0, 2**63, 10**26])
def test_an_assignment_id_out_of_range_is_refused(sample_items, config, api, pk):
    lease = api.post("/api/review/next/", {}, format="json").json()
    response = _then_next(api, {**lease, "id": pk})
    assert response.status_code in (403, 404)  # as review/ answers it: not yours
    assert not Review.objects.exists()
    assert list(Assignment.objects.values_list("id", flat=True)) == [lease["id"]]
