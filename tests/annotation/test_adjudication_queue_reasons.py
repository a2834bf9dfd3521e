"""The adjudication queue says why each item waits (a disagreement, a "cannot tell", a dispute, a feedback note) and
is filtered by it (issue 45, F4)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation.selectors.adjudication import adjudication_queue
from annotation.services.disputes import dispute_file, feedback_file
from annotation.services.queue import assignment_next

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiting(sample_items, config, make_user, review):
    """One item waiting for each reason: uid by reason."""
    alice, bob = make_user("reviewer"), make_user("reviewer")
    config.second_share = 1.0
    config.save()
    first = assignment_next(reviewer=alice, qa_type="multi_hop")
    review(first, "correct", 5)
    second = assignment_next(reviewer=bob, qa_type="multi_hop")
    review(second, "incorrect", 5)
    config.second_share = 0.0
    config.save()
    unclear = assignment_next(reviewer=alice, qa_type="short_answer")
    review(unclear, "cannot_tell", 4, cannot_tell_reason="excerpt")
    disputed = assignment_next(reviewer=alice, qa_type="true_false")
    dispute_file(
        raised_by=alice,
        assignment_id=disputed.pk,
        idempotency_key=disputed.idempotency_key,
        category="factual_error",
        text="the answer contradicts the excerpt",
    )
    noted = assignment_next(reviewer=alice, qa_type="list")
    feedback_file(author=alice, assignment_id=noted.pk, idempotency_key=noted.idempotency_key, text="odd wording")
    return {
        "disagreement": first.item.uid,
        "cannot_tell": unclear.item.uid,
        "dispute": disputed.item.uid,
        "feedback": noted.item.uid,
    }


def _rows(html: str) -> dict[str, str]:
    """The queue's rows: item uid -> the text of its Why cell."""
    return dict(re.findall(r'<tr data-uid="([^"]+)">.*?<td class="queue-reasons">([^<]*)</td>', html, flags=re.S))


def test_the_queue_says_why_each_item_waits(client, make_user, waiting):
    client.force_login(make_user("adjudicator"))
    rows = _rows(client.get(reverse("adjudication_queue")).content.decode())
    assert rows == {
        waiting["disagreement"]: "The reviewers disagree",
        waiting["cannot_tell"]: "A reviewer could not tell from the source",
        waiting["dispute"]: "A dispute is open",
        waiting["feedback"]: "A feedback note is open",
    }


@pytest.mark.parametrize("reason", ["disagreement", "cannot_tell", "dispute", "feedback"])
def test_the_queue_is_filtered_by_why_items_wait(client, make_user, waiting, reason):
    adjudicator = make_user("adjudicator")
    client.force_login(adjudicator)
    page = client.get(reverse("adjudication_queue"), {"reason": reason}).content.decode()
    assert set(_rows(page)) == {waiting[reason]}
    assert f'<option value="{reason}" selected>' in page
    assert list(adjudication_queue(user=adjudicator, reason=reason).values_list("uid", flat=True)) == [waiting[reason]]


def test_an_unknown_reason_shows_the_whole_queue(client, make_user, waiting):
    client.force_login(make_user("adjudicator"))
    assert len(_rows(client.get(reverse("adjudication_queue"), {"reason": "bogus"}).content.decode())) == 4
