"""A dispute's outcome follows the final verdict (usability F1): deciding a disputed item Correct accepts it unchanged,
so its dispute is rejected; a verdict that agrees with the dispute upholds it; where the verdict does not settle it
the adjudicator says which, and a choice that contradicts the verdict is refused, through the service, the API and
the page alike. And "My disputes" is the person's own (F35)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Adjudication, Dispute, FeedbackNote, QAItem
from annotation.selectors.adjudication import item_story
from annotation.services.adjudication import item_adjudicate
from annotation.services.disputes import dispute_file, dispute_outcome_implied, feedback_file
from annotation.services.queue import assignment_next
from annotation.workflow import ItemStatus, Verdict
from portal.errors import DomainError

pytestmark = pytest.mark.django_db

CATEGORIES = Dispute.Category.values


@pytest.fixture
def disputed(sample_items, config, make_user):
    """``disputed(category)``: a reviewer files a dispute of that category on her lease; returns (dispute, item)."""

    def file(category: str = "factual_error", reviewer=None):
        reviewer = reviewer or make_user("reviewer")
        lease = assignment_next(reviewer=reviewer)
        dispute = dispute_file(
            raised_by=reviewer,
            assignment_id=lease.pk,
            idempotency_key=lease.idempotency_key,
            category=category,
            text="The expected answer is wrong.",
        )
        return dispute, QAItem.objects.get(pk=lease.item_id)

    return file


def _decide(item, adjudicator, verdict, **kw):
    return item_adjudicate(item=item, adjudicator=adjudicator, verdict=verdict, relevance=5, reason="Checked.", **kw)


def _api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


# -- the rule -----------------------------------------------------------------------------------------------------


def test_the_rule_for_every_category_and_verdict():
    """Correct accepts the item unchanged: every dispute is rejected. Incorrect (the item does not stand as it is)
    upholds every dispute that says the item is wrong in a named way; "other" says nothing the verdict can settle.
    Cannot tell settles only "not supported by the source", which is what it says."""
    upheld, rejected = Dispute.Status.UPHELD, Dispute.Status.REJECTED
    expected = {
        Verdict.CORRECT: dict.fromkeys(CATEGORIES, rejected),
        Verdict.INCORRECT: {
            "factual_error": upheld,
            "not_in_source": upheld,
            "ambiguous": upheld,
            "wrong_format": upheld,
            "other": None,
        },
        Verdict.CANNOT_TELL: {
            "factual_error": None,
            "not_in_source": upheld,
            "ambiguous": None,
            "wrong_format": None,
            "other": None,
        },
    }
    for verdict, by_category in expected.items():
        for category, outcome in by_category.items():
            assert dispute_outcome_implied(category=category, verdict=verdict) == outcome, (verdict, category)


# -- the service --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("category", CATEGORIES)
def test_deciding_correct_rejects_the_dispute(disputed, make_user, category):
    dispute, item = disputed(category)
    _decide(item, make_user("adjudicator"), "correct")
    dispute.refresh_from_db()
    item.refresh_from_db()
    assert (item.status, dispute.status) == (ItemStatus.VERIFIED, Dispute.Status.REJECTED)
    assert dispute.resolution_note == "Checked."


@pytest.mark.parametrize(("category", "verdict"), [("factual_error", "incorrect"), ("not_in_source", "cannot_tell")])
def test_a_verdict_that_agrees_with_the_dispute_upholds_it(disputed, make_user, category, verdict):
    dispute, item = disputed(category)
    _decide(item, make_user("adjudicator"), verdict)
    dispute.refresh_from_db()
    assert dispute.status == Dispute.Status.UPHELD


def test_a_contradictory_choice_is_refused_and_nothing_changes(disputed, make_user):
    dispute, item = disputed("factual_error")
    adjudicator = make_user("adjudicator")
    with pytest.raises(DomainError) as refused:
        _decide(item, adjudicator, "correct", dispute_outcome="upheld")
    assert refused.value.http_status == 400 and refused.value.code == "dispute_outcome_contradicts"
    message = str(refused.value)
    assert f"dispute {dispute.pk}" in message.lower() and "Correct" in message and "upheld" in message
    with pytest.raises(DomainError):
        _decide(item, adjudicator, "incorrect", dispute_outcomes={dispute.pk: "rejected"})
    dispute.refresh_from_db()
    item.refresh_from_db()
    assert dispute.status == Dispute.Status.OPEN and item.status == ItemStatus.HELD
    assert not Adjudication.objects.exists()
    # An explicit choice that agrees with the verdict is fine.
    _decide(item, adjudicator, "correct", dispute_outcome="rejected")
    dispute.refresh_from_db()
    assert dispute.status == Dispute.Status.REJECTED


def test_where_the_verdict_does_not_settle_it_the_adjudicator_chooses(disputed, make_user):
    dispute, item = disputed("other")
    adjudicator = make_user("adjudicator")
    with pytest.raises(DomainError) as refused:
        _decide(item, adjudicator, "incorrect")
    assert refused.value.code == "dispute_outcome_missing" and f"dispute {dispute.pk}" in str(refused.value).lower()
    assert not Adjudication.objects.exists()
    with pytest.raises(DomainError) as unknown:  # a dispute that is not open on this item
        _decide(item, adjudicator, "incorrect", dispute_outcomes={dispute.pk: "rejected", dispute.pk + 99: "upheld"})
    assert unknown.value.code == "dispute_not_open"
    _decide(item, adjudicator, "incorrect", dispute_outcomes={dispute.pk: "rejected"})
    dispute.refresh_from_db()
    assert dispute.status == Dispute.Status.REJECTED


def test_each_open_dispute_follows_its_own_category(disputed, make_user):
    first, item = disputed("factual_error")
    organizer = make_user("organizer")
    second = dispute_file(raised_by=organizer, item=item, category="other", text="Outdated guideline.")
    _decide(item, make_user("adjudicator"), "incorrect", dispute_outcomes={second.pk: "rejected"})
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, second.status) == (Dispute.Status.UPHELD, Dispute.Status.REJECTED)


# -- the API ------------------------------------------------------------------------------------------------------


def test_api_refuses_a_contradiction_with_a_clear_message(disputed, make_user):
    dispute, item = disputed("ambiguous")
    api = _api(make_user("adjudicator"))
    url = f"/api/adjudication/{item.uid}/"
    body = {"verdict": "correct", "relevance": 5, "reason": "Fine."}
    refused = api.post(url, {**body, "dispute_outcome": "upheld"}, format="json")
    assert refused.status_code == 400 and refused.json()["code"] == "dispute_outcome_contradicts"
    assert f"ispute {dispute.pk}" in refused.json()["detail"]
    refused = api.post(url, {**body, "dispute_outcomes": {str(dispute.pk): "upheld"}}, format="json")
    assert refused.status_code == 400
    for not_an_id in ("first", "²", "9" * 5000):  # not a dispute id: refused, never a 500 (int() of 5000 digits)
        assert api.post(url, {**body, "dispute_outcomes": {not_an_id: "upheld"}}, format="json").status_code == 400
    assert Dispute.objects.get(pk=dispute.pk).status == Dispute.Status.OPEN
    assert api.post(url, body, format="json").status_code == 201  # no choice: the verdict settles it
    assert api.get(f"/api/disputes/{dispute.pk}/").json()["status"] == "rejected"


# -- the pages ----------------------------------------------------------------------------------------------------


def test_the_page_records_the_outcome_the_verdict_implies_and_refuses_a_contradiction(client, disputed, make_user):
    dispute, item = disputed("factual_error")
    client.force_login(make_user("adjudicator"))
    url = reverse("adjudication_item", args=[item.uid])
    page = client.get(url).content.decode()
    assert "Open disputes are" not in page
    # Nothing preselected: neither outcome of the dispute is checked before a verdict is chosen.
    assert f'name="dispute_{dispute.pk}"' in page
    assert not [line for line in page.splitlines() if f'name="dispute_{dispute.pk}"' in line and "checked" in line]
    form = {"verdict": "correct", "relevance": "5", "reason": "The excerpt says so."}
    refused = client.post(url, {**form, f"dispute_{dispute.pk}": "upheld"})
    assert refused.status_code == 400
    assert "cannot be upheld" in refused.content.decode()
    assert Dispute.objects.get(pk=dispute.pk).status == Dispute.Status.OPEN
    assert client.post(url, form).status_code == 302
    assert Dispute.objects.get(pk=dispute.pk).status == Dispute.Status.REJECTED


def test_history_and_my_disputes_say_rejected_after_a_correct_decision(client, disputed, make_user):
    reviewer = make_user("reviewer")
    dispute, item = disputed("factual_error", reviewer=reviewer)
    adjudicator = make_user("adjudicator")
    _decide(item, adjudicator, "correct")
    story = [f"{e['what']}: {e['detail']}" for e in item_story(adjudicator, item)]
    assert "Dispute rejected: Checked." in story and not any("upheld" in line for line in story)
    client.force_login(reviewer)
    mine = client.get(reverse("dispute_list")).content.decode()
    assert "Rejected" in mine and "Upheld" not in mine
    detail = client.get(reverse("dispute_detail", args=[dispute.pk])).content.decode()
    assert "Rejected by" in detail


def test_my_disputes_are_my_own_and_adjudicators_have_all_disputes(client, disputed, make_user):
    both = make_user("reviewer", "adjudicator")
    mine, _ = disputed("ambiguous", reviewer=both)
    theirs, _ = disputed("factual_error")
    client.force_login(both)
    page = client.get(reverse("dispute_list")).content.decode()
    assert page.count("dispute-row") == 1 and f"Dispute {mine.pk}<" in page and "My disputes" in page
    everything = client.get(reverse("dispute_all")).content.decode()
    assert everything.count("dispute-row") == 2 and "All disputes" in everything
    assert f"Dispute {theirs.pk}<" in everything
    client.force_login(make_user("reviewer"))
    assert client.get(reverse("dispute_all")).status_code == 403


def test_dispute_page_says_what_the_decision_does_to_this_dispute(client, disputed, make_user):
    dispute, item = disputed("factual_error")
    client.force_login(make_user("adjudicator"))
    page = client.get(reverse("dispute_detail", args=[dispute.pk])).content.decode()
    assert "Uphold it: decide the item" not in page and "upholds (or rejects)" not in page
    assert "Decide the item" in page
    rule = " ".join(page[page.index('id="outcome-rule"') :].split("</p>")[0].split())
    assert "Correct: <strong>rejected</strong>" in rule and "Incorrect: <strong>upheld</strong>" in rule
    assert "Cannot tell from the source: you say which" in rule


def test_an_item_held_only_by_feedback_offers_to_close_the_note(client, sample_items, config, make_user, review):
    config.second_share = 0.0
    config.save()
    lease = assignment_next(reviewer=make_user("reviewer"))
    review(lease, "correct", 5)
    item = QAItem.objects.get(pk=lease.item_id)
    feedback_file(author=make_user("organizer"), item=item, text="Typo in the question")
    assert FeedbackNote.objects.filter(item=item, status="open").count() == 1
    client.force_login(make_user("adjudicator"))
    page = client.get(reverse("adjudication_item", args=[item.uid])).content.decode()
    assert "Reject the disputes" not in page
    assert "Close the feedback note: the item goes back where it was" in page
