"""Saved means saved: a review sent again on a lease that already has one (a double click, a retry, a second tab).
The same review again is a success; a different one is refused with what is stored, over the API (409) and on the
page (a clear message, never "Review saved."), with an offer to change the stored review where that is allowed, and
the text just typed kept (security report finding 9, usability F40). Gold answers the same way."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Assignment, GoldAnswer, Review
from annotation.services.gold import gold_mark
from annotation.services.queue import assignment_next
from annotation.services.review import ReviewAlreadySent
from annotation.services.review_edit import review_edit
from annotation.workflow import EDIT_REFUSED_SECOND_MESSAGE, Stage
from portal.api_tokens import api_token_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(reviewer):
    _, key = api_token_create(user=reviewer, name="loop", mfa_verified=False)
    return APIClient(HTTP_AUTHORIZATION=f"Token {key}")


def _share(config, share: float, gold_rate: float = 0.0):
    config.second_share, config.gold_rate = share, gold_rate
    config.save()


def _body(lease, verdict="correct", relevance=4, comment="") -> dict:
    return {
        "idempotency_key": str(lease.idempotency_key),
        "verdict": verdict,
        "relevance": relevance,
        "comment": comment,
    }


# --- the service ----------------------------------------------------------------------------------------------


def test_the_same_review_again_is_the_stored_one_and_a_different_one_is_refused(sample_items, config, reviewer, review):
    _share(config, 0.0)
    lease = assignment_next(reviewer=reviewer)
    first = review(lease, "correct", 5, comment="fine ")
    assert review(lease, "correct", 5, comment="fine").pk == first.pk  # a double click (spaces are not a change)
    with pytest.raises(ReviewAlreadySent) as refused:
        review(lease, "incorrect", 1, comment="changed my mind")
    assert refused.value.http_status == 409 and refused.value.code == "already_reviewed"
    assert refused.value.stored.pk == first.pk
    assert "Correct, GP relevance 5, comment “fine”" in str(refused.value) and "not saved" in str(refused.value)
    assert list(Review.objects.values_list("verdict", "relevance", "comment")) == [("correct", 5, "fine")]


def test_a_retry_of_the_first_request_after_a_change_is_still_a_retry(sample_items, config, reviewer, review):
    _share(config, 1.0)
    lease = assignment_next(reviewer=reviewer)
    first = review(lease, "correct", 5)
    review_edit(reviewer=reviewer, review_id=first.pk, verdict="incorrect", relevance=2)
    assert review(lease, "correct", 5).verdict == "incorrect"  # the stored (changed) review, nothing changed
    with pytest.raises(ReviewAlreadySent):
        review(lease, "cannot_tell", 3, cannot_tell_reason="excerpt")


def test_a_gold_answer_sent_again_differently_is_refused_too(sample_items, config, organizer, reviewer, review):
    gold_mark(item=sample_items[0], expected_verdict="incorrect", by=organizer)
    _share(config, 0.0, gold_rate=1.0)
    lease = assignment_next(reviewer=reviewer, gold_draw=0.0)
    assert lease.stage == Stage.GOLD
    review(lease, "incorrect", 4)
    assert review(lease, "incorrect", 4).verdict == "incorrect"
    with pytest.raises(ReviewAlreadySent):
        review(lease, "correct", 4)
    answer = GoldAnswer.objects.get()
    assert (answer.verdict, answer.is_correct) == ("incorrect", True)


# --- the API ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ["review", "review-then-next"])
def test_the_api_answers_409_with_what_is_stored_and_takes_no_lease(sample_items, config, api, reviewer, endpoint):
    _share(config, 1.0)
    lease = assignment_next(reviewer=reviewer)
    url = f"/api/review/assignments/{lease.pk}/{endpoint}/"
    assert api.post(url, _body(lease, comment="tab one"), format="json").status_code == 201
    leases = Assignment.objects.count()
    again = api.post(url, _body(lease, comment="tab one"), format="json")
    assert again.status_code == 201  # an identical resend stays a success

    response = api.post(url, _body(lease, "incorrect", 2, "tab two: the answer is wrong"), format="json")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "already_reviewed"
    assert body["stored"]["verdict"] == "correct" and body["stored"]["comment"] == "tab one"
    assert body["stored"]["assignment"] == lease.pk
    assert "Correct" in body["detail"] and "tab one" in body["detail"] and "not saved" in body["detail"]
    # A first review: its author may still change it, and is told where.
    assert body["editable"] is True and body["change_url"] == reverse("review_edit", args=[lease.pk])
    assert body["change_url"] in body["detail"]
    assert Assignment.objects.count() == leases  # review-then-next took no other lease
    assert Review.objects.get(assignment=lease).comment == "tab one"


def test_a_refused_second_review_and_a_refused_gold_answer_read_the_same(
    sample_items, config, organizer, make_user, api, reviewer, review
):
    gold_mark(item=sample_items[0], expected_verdict="correct", by=organizer)
    _share(config, 1.0, gold_rate=0.5)
    review(assignment_next(reviewer=make_user("reviewer"), gold_draw=0.99), "correct", 4)
    second = assignment_next(reviewer=reviewer, gold_draw=0.99)
    assert second.stage == Stage.SECONDARY
    bodies = []
    for lease in (second, None):
        lease = lease or assignment_next(reviewer=reviewer, gold_draw=0.0)
        url = f"/api/review/assignments/{lease.pk}/review/"
        assert api.post(url, _body(lease), format="json").status_code == 201
        response = api.post(url, _body(lease, "incorrect"), format="json")
        assert response.status_code == 409
        body = response.json()
        bodies.append({**body, "stored": {**body["stored"], "assignment": 0, "created_at": ""}})
    assert GoldAnswer.objects.get().verdict == "correct"
    assert bodies[0] == bodies[1]
    assert bodies[0]["editable"] is False and bodies[0]["change_url"] is None
    assert EDIT_REFUSED_SECOND_MESSAGE in bodies[0]["detail"] and "gold" not in bodies[0]["detail"].lower()


# --- the page --------------------------------------------------------------------------------------------------


def _post(client, lease, verdict, relevance, comment, **kw):
    body = _body(lease, verdict, relevance, comment)
    if verdict == "cannot_tell":
        body["cannot_tell_reason"] = "excerpt"
    return client.post(reverse("review_assignment", args=[lease.pk]), body, **kw)


def test_the_page_says_not_saved_shows_the_stored_review_and_keeps_what_was_typed(
    client, sample_items, config, reviewer
):
    _share(config, 1.0)
    lease = assignment_next(reviewer=reviewer)
    client.force_login(reviewer)
    tab_one = _post(client, lease, "incorrect", 2, "first tab", follow=True)  # saved, and the next item opens
    assert "Review saved." in tab_one.content.decode()
    response = _post(client, lease, "correct", 5, "second tab, <b>different</b> verdict")  # tab two
    html = response.content.decode()
    assert response.status_code == 409
    assert "Review saved." not in html and "not saved" in html
    assert 'id="already-sent"' in html and "first tab" in html and "Incorrect" in html
    # What was typed is still in the form (escaped), and can be made the change with one button.
    assert "second tab, &lt;b&gt;different&lt;/b&gt; verdict</textarea>" in html
    assert 'id="verdict-correct"' in html and 'value="correct" id="verdict-correct"\n              checked' in html
    assert reverse("review_edit", args=[lease.pk]) in html and 'id="apply-change"' in html
    assert Review.objects.get(assignment=lease).comment == "first tab"

    changed = client.post(
        reverse("review_edit", args=[lease.pk]),
        {"verdict": "correct", "relevance": "5", "comment": "second tab, <b>different</b> verdict"},
    )
    assert changed.status_code == 302
    stored = Review.objects.get(assignment=lease)
    assert (stored.verdict, stored.relevance, stored.comment) == ("correct", 5, "second tab, <b>different</b> verdict")


def test_the_page_of_an_identical_resend_says_saved_and_goes_on(client, sample_items, config, reviewer):
    _share(config, 1.0)
    lease = assignment_next(reviewer=reviewer)
    client.force_login(reviewer)
    _post(client, lease, "incorrect", 2, "same")
    response = _post(client, lease, "incorrect", 2, "same")
    assert response.status_code == 302
    assert "Review saved." in [str(m) for m in response.wsgi_request._messages]


def test_a_locked_review_sent_again_differently_says_so_without_an_offer(
    client, sample_items, config, reviewer, review
):
    _share(config, 0.0)
    lease = assignment_next(reviewer=reviewer)
    client.force_login(reviewer)
    _post(
        client, lease, "cannot_tell", 3, "unsure", follow=True
    )  # a primary "cannot tell" goes to an adjudicator at once
    html = _post(client, lease, "correct", 5, "sure now").content.decode()
    assert "not saved" in html and 'id="apply-change"' not in html and 'id="already-sent-locked"' in html
    assert "sure now</textarea>" in html and "unsure" in html
