"""Nothing is ever stuck in adjudication: an item no adjudicator may decide is decided by an organizer who did not
review it, or sent back to review by fresh people; the adjudication and dispute pages show what the rules allow."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Assignment, Dispute, QAItem, Review
from annotation.selectors.adjudication import adjudication_blocked, adjudication_queue
from annotation.services.adjudication import item_adjudicate, item_reassign
from annotation.services.disputes import dispute_file, quote_marked
from annotation.services.queue import assignment_next
from annotation.workflow import ItemStatus
from portal.errors import Conflict, DomainError, NotAllowed
from portal.models import AuditEntry

pytestmark = pytest.mark.django_db


@pytest.fixture
def blocked(sample_items, config, make_user, review):
    """An item the two reviewers disagree on, and both reviewers are the only adjudicators."""
    config.second_share = 1.0
    config.save()
    first = make_user("reviewer", "adjudicator", email="ann@test.portal")
    second = make_user("reviewer", "adjudicator", email="ben@test.portal")
    a = assignment_next(reviewer=first)
    review(a, "correct", 5, comment="Matches page 3.")
    b = assignment_next(reviewer=second)
    assert b.item_id == a.item_id  # second reviews come first
    review(b, "incorrect", 4, comment="The dose is wrong.")
    item = QAItem.objects.get(pk=a.item_id)
    assert item.status == ItemStatus.IN_ADJUDICATION
    return item, first, second


def _decide(item, who, **kw):
    return item_adjudicate(item=item, adjudicator=who, verdict="incorrect", relevance=4, reason="p. 3 says so", **kw)


def test_blocked_item_is_in_no_adjudicators_queue_but_in_the_organizers(blocked, make_user):
    item, first, second = blocked
    assert item in adjudication_blocked()
    assert item not in adjudication_queue(user=first) and item not in adjudication_queue(user=second)
    assert item in adjudication_queue(user=make_user("organizer"))
    with pytest.raises(NotAllowed):
        _decide(item, first)


def test_an_organizer_who_did_not_review_it_decides_a_blocked_item(blocked, make_user):
    item, _, _ = blocked
    organizer = make_user("organizer")
    _decide(item, organizer)
    item.refresh_from_db()
    assert (item.status, item.final_verdict, item.final_source) == ("rejected", "incorrect", "adjudication")


def test_a_conflicted_organizer_cannot_decide_it(blocked, make_user):
    item, first, _ = blocked
    from django.contrib.auth.models import Group

    first.groups.add(Group.objects.get(name="organizer"))
    first = type(first).objects.get(pk=first.pk)  # drop the cached roles
    with pytest.raises(NotAllowed) as refused:
        _decide(item, first)
    assert refused.value.code == "conflict_of_interest"
    assert QAItem.objects.get(pk=item.pk).status == ItemStatus.IN_ADJUDICATION


def test_organizers_leave_items_an_adjudicator_can_decide_to_the_adjudicators(blocked, make_user):
    item, _, _ = blocked
    make_user("adjudicator")  # now someone may decide it
    assert item not in adjudication_blocked()
    with pytest.raises(NotAllowed) as refused:
        _decide(item, make_user("organizer"))
    assert refused.value.code == "adjudicator_available"
    with pytest.raises(Conflict):
        item_reassign(item=item, organizer=make_user("organizer"), reason="stuck")


def test_reassign_sends_the_item_to_fresh_reviewers_and_keeps_the_old_reviews(blocked, make_user, review):
    item, first, second = blocked
    organizer = make_user("organizer")
    with pytest.raises(DomainError):
        item_reassign(item=item, organizer=organizer, reason="  ")
    with pytest.raises(NotAllowed):
        item_reassign(item=item, organizer=make_user("reviewer"), reason="stuck")
    item_reassign(item=item, organizer=organizer, reason="Both adjudicators reviewed it.")
    item.refresh_from_db()
    assert item.status == ItemStatus.IMPORTED
    old = Review.objects.filter(item=item)
    assert old.count() == 2 and all(r.superseded_at for r in old)
    from annotation.services.judgement_exports import judgement_rows

    exported = [row for row in judgement_rows() if row["item_uid"] == item.uid]
    assert len(exported) == 2 and all(row["set_aside_at"] for row in exported)  # kept, and said to be set aside
    assert set(Assignment.objects.filter(item=item).values_list("status", flat=True)) == {"superseded"}
    entry = AuditEntry.objects.get(action="item_reassigned", object_id=str(item.pk))
    assert entry.actor == organizer and entry.after["reason"] == "Both adjudicators reviewed it."
    # the former reviewers never get it again; people who were never given it review it afresh
    for person in (first, second):
        lease = assignment_next(reviewer=person)
        assert lease is None or lease.item_id != item.pk
    # Only this item left to review (the queue serves items in each person's seeded order).
    QAItem.objects.exclude(pk=item.pk).update(status=ItemStatus.VERIFIED)
    fresh = [make_user("reviewer"), make_user("reviewer")]
    leases = [assignment_next(reviewer=p) for p in fresh]
    ours = [lease for lease in leases if lease and lease.item_id == item.pk]
    assert ours and ours[0].stage == "primary"
    review(ours[0], "correct", 5)
    second_lease = assignment_next(reviewer=make_user("reviewer"))
    assert second_lease.item_id == item.pk and second_lease.stage == "secondary"
    review(second_lease, "correct", 5)
    item.refresh_from_db()
    assert (item.status, item.final_source, item.final_relevance) == ("verified", "agreement", 5.0)


def test_a_conflicted_organizer_may_still_send_the_item_back(blocked, make_user):
    """Sending back judges nothing and shows no review: it is the way out when everyone reviewed the item."""
    item, first, _ = blocked
    from django.contrib.auth.models import Group

    first.groups.add(Group.objects.get(name="organizer"))
    first = type(first).objects.get(pk=first.pk)
    item_reassign(item=item, organizer=first, reason="all of us reviewed it")
    assert QAItem.objects.get(pk=item.pk).status == ItemStatus.IMPORTED


def test_a_held_item_is_decided_not_sent_back(sample_items, config, make_user):
    lease = assignment_next(reviewer=make_user("reviewer"))
    dispute_file(
        raised_by=lease.reviewer,
        assignment_id=lease.pk,
        idempotency_key=lease.idempotency_key,
        category="other",
        text="unclear",
    )
    with pytest.raises(Conflict) as refused:
        item_reassign(item=lease.item, organizer=make_user("organizer"), reason="x")
    assert refused.value.code == "not_reassignable"


# --- the quoted span in the excerpt ---------------------------------------------------------------------------


def test_quote_is_marked_and_everything_is_escaped():
    text = 'Give <b>5 mg</b> & then "<script>alert(1)</script>" twice.'
    html, found = quote_marked(text, "<script>alert(1)</script>")
    assert found
    assert str(html) == (
        'Give &lt;b&gt;5 mg&lt;/b&gt; &amp; then &quot;<mark id="quoted-span">'
        "&lt;script&gt;alert(1)&lt;/script&gt;</mark>&quot; twice."
    )


def test_quote_uses_its_offsets_and_falls_back_to_the_text():
    text = "aspirin then aspirin again"
    assert str(quote_marked(text, "aspirin", 13, 20)[0]) == 'aspirin then <mark id="quoted-span">aspirin</mark> again'
    # offsets that no longer cover the quote (the excerpt changed): the first occurrence of the text
    assert str(quote_marked(text, "then", 0, 4)[0]) == 'aspirin <mark id="quoted-span">then</mark> aspirin again'


def test_quote_not_found_is_said_and_nothing_is_marked():
    html, found = quote_marked("a <i>b</i>", "not there")
    assert not found and str(html) == "a &lt;i&gt;b&lt;/i&gt;"
    assert quote_marked("text", "") == ("text", False)


# --- pages ----------------------------------------------------------------------------------------------------


def test_adjudication_page_marks_the_differing_fields_and_tells_the_history(blocked, client, make_user):
    item, _, _ = blocked
    judge = make_user("organizer")
    client.force_login(judge)
    html = client.get(reverse("adjudication_item", args=[item.uid])).content.decode()
    assert 'data-field="verdict"' in html
    verdict_row = html.split('data-field="verdict"')[1].split("</tr>")[0]
    comment_row = html.split('data-field="comment"')[1].split("</tr>")[0]
    assert "differs" in verdict_row and "Correct" in verdict_row and "Incorrect" in verdict_row
    assert "differs" not in comment_row and "The dose is wrong." in comment_row
    assert "First review</strong> by ann@test.portal on" in html
    assert "Second review</strong> by ben@test.portal on" in html and ": Incorrect, GP relevance 4" in html
    assert 'id="adjudication-form"' in html and 'id="reassign-link"' in html
    assert "item_submit_primary" not in html and "{" not in html.split('id="history"')[1]


def test_after_a_decision_the_next_item_opens(blocked, client, make_user, review, sample_items):
    item, first, second = blocked
    # a second blocked item after the first
    a = assignment_next(reviewer=first)
    review(a, "correct", 5)
    review(assignment_next(reviewer=second), "cannot_tell", 2, cannot_tell_reason="ambiguous")
    other = QAItem.objects.get(pk=a.item_id)
    assert other.status == ItemStatus.IN_ADJUDICATION
    client.force_login(make_user("organizer"))
    response = client.post(
        reverse("adjudication_item", args=[item.uid]), {"verdict": "correct", "relevance": "5", "reason": "p. 3"}
    )
    assert response.status_code == 302 and response["Location"] == reverse("adjudication_item", args=[other.uid])
    page = client.get(response["Location"]).content.decode()
    assert f"Decided {item.uid} – next item." in page


def test_dispute_page_shows_the_item_the_marked_quote_and_the_way_to_resolve(sample_items, config, client, make_user):
    lease = assignment_next(reviewer=make_user("reviewer"))
    while lease.item.passage is None:  # the seeded queue may start at an item without an excerpt: ask another person
        lease = assignment_next(reviewer=make_user("reviewer"))
    passage = lease.item.passage.text
    quote = passage[10:40]
    dispute = dispute_file(
        raised_by=lease.reviewer,
        assignment_id=lease.pk,
        idempotency_key=lease.idempotency_key,
        category="not_in_source",
        text="Not what it says.",
        quote_text=quote,
    )
    client.force_login(make_user("adjudicator"))
    html = client.get(reverse("dispute_detail", args=[dispute.pk])).content.decode()
    assert '<mark id="quoted-span">' in html and 'id="quote-missing"' not in html
    assert lease.item.question.splitlines()[0][:30] in html.replace("&#x27;", "'").replace("&quot;", '"')
    assert 'id="decide-link"' in html and 'id="reject-form"' in html
    # the adjudication page marks the open dispute's quote in the excerpt too
    html = client.get(reverse("adjudication_item", args=[lease.item.uid])).content.decode()
    assert '<mark id="quoted-span">' in html and "(marked in the excerpt)" in html
    response = client.post(reverse("dispute_detail", args=[dispute.pk]), {"action": "reject", "note": "It is."})
    assert response.status_code == 302
    assert Dispute.objects.get(pk=dispute.pk).status == "rejected"
    # the reviewer who filed it sees the item and the outcome, but no way to resolve it
    client.force_login(lease.reviewer)
    html = client.get(reverse("dispute_detail", args=[dispute.pk])).content.decode()
    assert 'id="reject-form"' not in html and 'id="decide-link"' not in html and "Rejected" in html


def test_a_quote_with_markup_stays_text_on_the_dispute_page(sample_items, config, client, make_user):
    lease = assignment_next(reviewer=make_user("reviewer"))
    while lease.item.passage is None:  # the seeded queue may start at an item without an excerpt: ask another person
        lease = assignment_next(reviewer=make_user("reviewer"))
    item = lease.item
    item.passage.text = "Before <script>alert(1)</script> after."
    item.passage.save()
    dispute = Dispute.objects.create(
        item=item, raised_by=lease.reviewer, category="other", text="x", quote_text="<script>alert(1)</script>"
    )
    missing = Dispute.objects.create(item=item, raised_by=lease.reviewer, category="other", text="y", quote_text="gone")
    client.force_login(make_user("adjudicator"))
    html = client.get(reverse("dispute_detail", args=[dispute.pk])).content.decode()
    assert "<script>alert(1)" not in html
    assert '<mark id="quoted-span">&lt;script&gt;alert(1)&lt;/script&gt;</mark>' in html
    html = client.get(reverse("dispute_detail", args=[missing.pk])).content.decode()
    assert 'id="quote-missing"' in html and "<mark" not in html


def test_reassign_page_for_organizers(blocked, client, make_user):
    item, _, _ = blocked
    client.force_login(make_user("organizer"))
    url = reverse("vetting_reassign", args=[item.uid])
    assert client.post(url, {"reason": ""}).status_code == 400
    assert QAItem.objects.get(pk=item.pk).status == ItemStatus.IN_ADJUDICATION
    response = client.post(url, {"reason": "Both adjudicators reviewed it."})
    assert response.status_code == 302 and QAItem.objects.get(pk=item.pk).status == ItemStatus.IMPORTED
    client.force_login(make_user("reviewer"))
    assert client.get(url).status_code == 403


def test_dashboard_gives_each_blocked_item_a_way_forward(blocked, client, make_user):
    item, _, _ = blocked
    client.force_login(make_user("organizer"))
    html = client.get(reverse("vetting_progress")).content.decode()
    row = html.split('id="adjudication-blocked"')[1].split("</span>")[0]
    assert reverse("adjudication_item", args=[item.uid]) in row
    assert reverse("vetting_reassign", args=[item.uid]) in row


def test_api_organizer_decides_or_sends_back_a_blocked_item(blocked, make_user):
    from rest_framework.test import APIClient

    item, first, _ = blocked
    api = APIClient()
    api.force_authenticate(make_user("organizer"))
    assert item.uid in [row["uid"] for row in api.get("/api/adjudication/").json()]
    assert api.post(f"/api/adjudication/{item.uid}/reassign/", {"reason": ""}, format="json").status_code == 400
    response = api.post(f"/api/adjudication/{item.uid}/reassign/", {"reason": "both reviewed it"}, format="json")
    assert response.status_code == 200 and response.json() == {"uid": item.uid, "status": "imported"}
    reviewer_api = APIClient()
    reviewer_api.force_authenticate(make_user("reviewer"))
    assert (
        reviewer_api.post(f"/api/adjudication/{item.uid}/reassign/", {"reason": "x"}, format="json").status_code == 403
    )


def test_the_reviewer_who_filed_a_dispute_cannot_reject_it(sample_items, config, client, make_user):
    lease = assignment_next(reviewer=make_user("reviewer"))
    dispute = dispute_file(
        raised_by=lease.reviewer,
        assignment_id=lease.pk,
        idempotency_key=lease.idempotency_key,
        category="other",
        text="unclear",
    )
    client.force_login(lease.reviewer)
    response = client.post(reverse("dispute_detail", args=[dispute.pk]), {"action": "reject", "note": "mine"})
    assert response.status_code == 403 and "Only adjudicators and organizers" in response.content.decode()
    assert Dispute.objects.get(pk=dispute.pk).status == "open"


def test_review_comparison_marks_what_differs_and_skips_set_aside_reviews():
    from datetime import UTC, datetime

    from annotation.selectors.adjudication import review_comparison

    first = Review(verdict="correct", relevance=5, comment="ok")
    second = Review(verdict="correct", relevance=3, comment="")
    old = Review(verdict="incorrect", relevance=1, comment="x", superseded_at=datetime(2026, 5, 3, tzinfo=UTC))
    rows = {row["key"]: row for row in review_comparison([old, first, second], relevance_gap=2)}
    assert rows["verdict"]["differs"] is False and rows["verdict"]["values"] == ["Correct", "Correct"]
    assert rows["relevance"]["differs"] is True
    assert rows["relevance"]["note"] == "2 apart (a gap of 2 or more needs adjudication)"
    assert rows["comment"]["values"] == ["ok", "—"] and rows["comment"]["differs"] is False
    assert review_comparison([old, first], relevance_gap=2) == []


def test_a_review_set_aside_cannot_be_changed_but_the_new_rounds_can(blocked, make_user, review):
    # Reviews an organizer set aside no longer route the item; changing one would route it from the old round.
    from annotation.services.review_edit import review_edit, review_edit_refusal_for, review_own
    from annotation.workflow import EditRefusal

    item, first, _ = blocked
    old_primary = Review.objects.get(item=item, stage="primary")
    item_reassign(item=item, organizer=make_user("organizer"), reason="Both adjudicators reviewed it.")
    assert review_edit_refusal_for(review_own(reviewer=first, review_id=old_primary.pk)) == EditRefusal.SET_ASIDE
    with pytest.raises(Conflict):
        review_edit(reviewer=first, review_id=old_primary.pk, verdict="incorrect", relevance=4)
    QAItem.objects.exclude(pk=item.pk).update(status=ItemStatus.VERIFIED)  # only this item left to review
    fresh = make_user("reviewer")
    lease = assignment_next(reviewer=fresh)
    assert lease.item_id == item.pk
    new_primary = review(lease, "correct", 5)
    # The old round's second lease does not count as "a second reviewer was given the item" for the new review.
    changed = review_edit(reviewer=fresh, review_id=new_primary.pk, verdict="correct", relevance=4)
    assert changed.relevance == 4
