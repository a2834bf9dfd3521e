"""What the review pages say about the queue: items left, the batch's share done, and a type filter that tells the
truth when it runs dry or cannot apply yet."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import ImportBatch, QAItem
from annotation.selectors.queue import filter_exhausted_message, queue_outlook, waiting_by_type
from annotation.services.queue import assignment_next
from annotation.workflow import ItemStatus

pytestmark = pytest.mark.django_db


def _messages(response) -> str:
    return " ".join(str(m) for m in response.context["messages"])


def test_items_left_and_batch_share_done_known_answer(sample_items, config, make_user, reviewer):
    assert queue_outlook(reviewer)["left"] == 35
    assignment = assignment_next(reviewer=reviewer)
    others = [i.pk for i in sample_items if i.pk != assignment.item_id]
    QAItem.objects.filter(pk__in=others[:7]).update(status=ItemStatus.VERIFIED, final_source="primary")
    assignment_next(reviewer=make_user("reviewer"))  # someone else's live lease: not left for this reviewer
    outlook = queue_outlook(reviewer, lease=assignment)
    assert outlook["left"] == 35 - 7 - 1  # 26 waiting + the open one
    assert outlook["batch"]["percent"] == 20 and outlook["batch"]["total"] == 35  # 7 of 35 final


def test_the_review_page_says_how_many_are_left_and_how_far_the_batch_is(client, sample_items, config, reviewer):
    assignment = assignment_next(reviewer=reviewer)
    client.force_login(reviewer)
    html = client.get(reverse("review_assignment", args=[assignment.pk])).content.decode()
    batch = ImportBatch.objects.get()
    assert "35 items left for you" in html and f"batch “{batch.name}” 0 % done" in html


def test_paused_batches_and_own_items_are_not_left(sample_items, config, reviewer):
    assignment_next(reviewer=reviewer)
    assert sum(waiting_by_type(reviewer).values()) == 34
    ImportBatch.objects.update(paused=True)
    assert waiting_by_type(reviewer) == {}


def test_an_exhausted_filter_names_the_types_still_waiting(client, sample_items, config, reviewer):
    QAItem.objects.filter(qa_type="multi_hop").update(status=ItemStatus.VERIFIED)
    QAItem.objects.filter(qa_type="list").update(status=ItemStatus.VERIFIED)
    client.force_login(reviewer)
    response = client.post(reverse("review_next"), {"qa_type": "multi_hop", "guidelines_read": "on"}, follow=True)
    text = _messages(response)
    assert "No more multi-hop items for you; 25 items of other types are waiting" in text
    assert "5 true / false" in text and "5 multi-hop inverse" in text and "list" not in text
    assert "multi_hop" not in text  # type names in words


def test_an_exhausted_filter_with_nothing_else_says_so(sample_items, config, reviewer):
    QAItem.objects.exclude(qa_type="true_false").update(status=ItemStatus.VERIFIED)
    QAItem.objects.filter(qa_type="true_false").update(status=ItemStatus.REJECTED)
    assert filter_exhausted_message(reviewer, "true_false") == (
        "No more true / false items for you, and no items of other types are waiting for you either. Thank you!"
    )


def test_one_item_of_another_type_is_singular(sample_items, config, reviewer):
    QAItem.objects.exclude(pk=sample_items[0].pk).update(status=ItemStatus.VERIFIED)
    other = "short_answer" if sample_items[0].qa_type != "short_answer" else "list"
    assert "; 1 item of other types is waiting (1 " in filter_exhausted_message(reviewer, other)


def test_the_filter_explains_that_the_open_item_comes_first(client, sample_items, config, reviewer):
    open_lease = assignment_next(reviewer=reviewer, qa_type="true_false")
    client.force_login(reviewer)
    response = client.post(reverse("review_next"), {"qa_type": "multi_hop", "guidelines_read": "on"}, follow=True)
    assert response.redirect_chain[-1][0].startswith(reverse("review_assignment", args=[open_lease.pk]))
    text = _messages(response)
    assert "You asked for multi-hop items, but you still have an open true / false item: it comes first." in text
    start = client.get(reverse("review_next")).content.decode()
    assert "Your open item comes first" in start
