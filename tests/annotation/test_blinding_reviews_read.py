"""Blinding per item, whatever else a person saw in the portal: the adjudication page and API open only items that
wait for a decision (a person who also reviews never reads a first review there before writing the second), and
whoever read an item's reviews anywhere (adjudication, the organizers' item page and API, a dispute's page) is never
given that item to review afterwards, gold items included. The demo adjudicator reviews too: the case tested."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import QAItem
from annotation.services.disputes import dispute_file, dispute_reject
from annotation.services.gold import gold_mark
from annotation.services.queue import assignment_next
from annotation.workflow import ItemStatus, Stage

pytestmark = pytest.mark.django_db

SECRET_COMMENT = "FIRST-REVIEW-SECRET-4d7e"


def _api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def waiting_second(sample_items, config, make_user, review):
    """Alice reviewed a multi-hop item (a distinctive comment); it waits for its second review, nobody holds it.
    Dana is reviewer and adjudicator, as the demo adjudicator is."""
    config.second_share = 1.0
    config.save()
    alice, dana = make_user("reviewer"), make_user("reviewer", "adjudicator")
    first = assignment_next(reviewer=alice, qa_type="multi_hop")
    review(first, "incorrect", 2, comment=SECRET_COMMENT)
    item = QAItem.objects.get(pk=first.item_id)
    assert item.status == ItemStatus.IN_SECOND_REVIEW
    return dana, item


def _next_for(person, qa_type="multi_hop"):
    """The lease the queue hands ``person`` now; second reviews come before new items, so the waiting item would
    be this one if it were allowed."""
    return assignment_next(reviewer=person, qa_type=qa_type)


def test_the_adjudication_page_and_api_refuse_an_item_still_in_second_review(client, waiting_second, make_user):
    dana, item = waiting_second
    client.force_login(dana)
    page = client.get(reverse("adjudication_item", args=[item.uid]))
    html = page.content.decode()
    assert page.status_code == 403 and SECRET_COMMENT not in html and "Incorrect" not in html
    assert f"Item {item.uid} is not waiting for adjudication" in html
    api = _api(dana).get(f"/api/adjudication/{item.uid}/")
    assert api.status_code == 403 and api.json()["code"] == "not_waiting_for_adjudication"
    assert SECRET_COMMENT not in api.content.decode()
    posted = _api(dana).post(f"/api/adjudication/{item.uid}/issues/reject/", {"text": "x"}, format="json")
    assert posted.status_code == 403
    decided = client.post(reverse("adjudication_item", args=[item.uid]), {"verdict": "correct", "relevance": "5"})
    assert decided.status_code == 403 and QAItem.objects.get(pk=item.pk).status == ItemStatus.IN_SECOND_REVIEW
    # a pure adjudicator, and an organizer, are refused it too: nobody decides an item still in review
    assert _api(make_user("adjudicator")).get(f"/api/adjudication/{item.uid}/").status_code == 403
    assert _api(make_user("organizer")).get(f"/api/adjudication/{item.uid}/").status_code == 403
    # having read nothing, she is its blinded second reviewer
    lease = _next_for(dana)
    assert (lease.item_id, lease.stage) == (item.pk, Stage.SECONDARY)


def test_whoever_read_an_items_reviews_on_the_adjudication_page_is_never_given_it_to_review(
    client, waiting_second, make_user
):
    """A dispute holds the item; the adjudicator reads its first review while deciding whether the dispute stands,
    the dispute is rejected by someone else and the item goes back to its second review."""
    dana, item = waiting_second
    organizer = make_user("organizer")
    dispute = dispute_file(raised_by=organizer, item=item, category="ambiguous", text="Two answers fit.")
    client.force_login(dana)
    html = client.get(reverse("adjudication_item", args=[item.uid])).content.decode()
    assert SECRET_COMMENT in html  # held for an open dispute: it waits for an adjudicator
    dispute_reject(dispute=dispute, resolver=make_user("adjudicator"), note="one answer fits")
    assert QAItem.objects.get(pk=item.pk).status == ItemStatus.IN_SECOND_REVIEW
    lease = _next_for(dana)
    assert lease is None or lease.item_id != item.pk
    other = _next_for(make_user("reviewer"))
    assert (other.item_id, other.stage) == (item.pk, Stage.SECONDARY)  # anyone else gets it


@pytest.mark.parametrize("door", ["api_adjudication", "dispute_page", "dispute_api"])
def test_reading_the_reviews_or_dispute_through_another_door_bars_the_item_too(client, waiting_second, make_user, door):
    dana, item = waiting_second
    dispute = dispute_file(
        raised_by=make_user("organizer"), item=item, category="ambiguous", text="DISPUTE-TEXT Two answers fit."
    )
    if door == "api_adjudication":
        assert SECRET_COMMENT in _api(dana).get(f"/api/adjudication/{item.uid}/").content.decode()
    elif door == "dispute_page":
        client.force_login(dana)
        assert "DISPUTE-TEXT" in client.get(reverse("dispute_detail", args=[dispute.pk])).content.decode()
    else:
        assert "DISPUTE-TEXT" in _api(dana).get(f"/api/disputes/{dispute.pk}/").content.decode()
    dispute_reject(dispute=dispute, resolver=make_user("adjudicator"), note="one answer fits")
    lease = _next_for(dana)
    assert lease is None or lease.item_id != item.pk


@pytest.mark.parametrize("door", ["page", "api"])
def test_an_organizer_who_reviews_and_opened_the_item_page_is_never_given_it(client, waiting_second, make_user, door):
    _, item = waiting_second
    organizer_reviewer = make_user("organizer", "reviewer")
    if door == "page":
        client.force_login(organizer_reviewer)
        page = client.get(reverse("item_detail", args=[item.uid])).content.decode()
        assert "First review" in page and "Incorrect, GP relevance 2" in page  # the story tells the first review
    else:
        assert _api(organizer_reviewer).get(f"/api/items/{item.uid}/").json()["status"] == "in_second_review"
    lease = _next_for(organizer_reviewer)
    assert lease is None or lease.item_id != item.pk


def test_a_gold_item_whose_page_was_read_is_not_handed_out_as_gold(client, sample_items, config, make_user):
    organizer = make_user("organizer")
    gold_item = QAItem.objects.filter(status=ItemStatus.IMPORTED).first()
    gold_mark(item=gold_item, expected_verdict="incorrect", by=organizer, planted_error=True)
    organizer_reviewer = make_user("organizer", "reviewer")
    client.force_login(organizer_reviewer)
    assert client.get(reverse("item_detail", args=[gold_item.uid])).status_code == 200  # the page names it gold
    config.gold_rate = 1.0
    config.save()
    lease = assignment_next(reviewer=organizer_reviewer, gold_draw=0.0)
    assert lease is not None and lease.item_id != gold_item.pk and lease.stage != Stage.GOLD
    assert assignment_next(reviewer=make_user("reviewer"), gold_draw=0.0).item_id == gold_item.pk


def test_an_item_sent_back_to_review_after_adjudication_is_not_given_to_whoever_read_its_reviews(
    client, sample_items, config, make_user, review
):
    """Every adjudicator reviewed the item; an organizer who also reviews reads its reviews on the adjudication page,
    then sends it back to review: the fresh reviewers it goes to are people who read neither review."""
    from annotation.services.adjudication import item_reassign

    config.second_share = 1.0
    config.save()
    alice, dana = make_user("reviewer"), make_user("reviewer", "adjudicator")
    review(assignment_next(reviewer=alice, qa_type="multi_hop"), "incorrect", 2, comment=SECRET_COMMENT)
    second = assignment_next(reviewer=dana, qa_type="multi_hop")
    review(second, "correct", 5)
    item = QAItem.objects.get(pk=second.item_id)
    assert item.status == ItemStatus.IN_ADJUDICATION  # and dana, the only adjudicator, reviewed it
    organizer_reviewer = make_user("organizer", "reviewer")
    client.force_login(organizer_reviewer)
    assert SECRET_COMMENT in client.get(reverse("adjudication_item", args=[item.uid])).content.decode()
    item_reassign(item=item, organizer=organizer_reviewer, reason="Both adjudicators reviewed it.")
    given = []
    while (lease := assignment_next(reviewer=organizer_reviewer, qa_type="multi_hop")) is not None:
        given.append(lease.item_id)
        lease.status = "released"  # put back unreviewed; the queue never hands the same item twice
        lease.save()
    assert given and item.pk not in given


def test_the_items_left_count_leaves_out_items_whose_reviews_the_person_read(client, waiting_second, make_user):
    """The review page's "N items left" counts what the queue could hand the person: an item barred by the blinding
    rule is not among them (else the count would promise an item that never comes)."""
    from annotation.selectors.queue import waiting_by_type

    dana, item = waiting_second
    other = make_user("reviewer", "adjudicator")
    before = waiting_by_type(dana).get("multi_hop", 0)
    assert before == waiting_by_type(other).get("multi_hop", 0)
    dispute = dispute_file(raised_by=make_user("organizer"), item=item, category="ambiguous", text="Two answers fit.")
    client.force_login(dana)
    assert SECRET_COMMENT in client.get(reverse("adjudication_item", args=[item.uid])).content.decode()
    dispute_reject(dispute=dispute, resolver=make_user("adjudicator"), note="one answer fits")
    assert waiting_by_type(dana).get("multi_hop", 0) == before - 1
    assert waiting_by_type(other).get("multi_hop", 0) == before
