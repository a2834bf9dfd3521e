"""A gold item looks like any other item to the reviewer before, during and after the answer: the queue's header
("N items left for you · batch … % done"), the review page and the API lease, "My recent reviews", the ``z`` key and
the page of the answer (security report finding 3)."""

from __future__ import annotations

import re

import pytest
from django.db import transaction
from django.urls import reverse

from annotation.models import GoldAnswer, ImportBatch, QAItem, Review
from annotation.serializers.review import AssignmentSerializer
from annotation.services.gold import gold_mark
from annotation.services.queue import assignment_next
from annotation.services.review import review_submit
from annotation.services.review_edit import review_last_of, reviews_recent_of
from annotation.workflow import EDIT_REFUSED_SECOND_MESSAGE, Stage

pytestmark = pytest.mark.django_db

REAL, GOLD = 0.99, 0.0  # gold draws: above the rate never gold, 0.0 always gold (while one is left)


@pytest.fixture
def gold_in_old_batch(sample_items, config, organizer):
    """Two gold items of a small, mostly finished batch of their own (the batch is a tell if shown), gold rate 50 %,
    no second reviews; returns the gold items. The other 33 items wait in the sample batch."""
    config.gold_rate, config.second_share = 0.5, 0.0
    config.save()
    old = ImportBatch.objects.create(name="Old finished batch", created_by=organizer)
    golds = [i for i in sample_items if i.qa_type == "short_answer"][:2]
    QAItem.objects.filter(pk__in=[g.pk for g in golds]).update(batch=old)
    for item in golds:
        gold_mark(item=item, expected_verdict="correct", by=organizer)
    return golds


def _outlook(client, assignment) -> str:
    html = client.get(reverse("review_assignment", args=[assignment.pk])).content.decode()
    match = re.search(r'id="queue-outlook">(.*?) · <a', html, re.S)
    assert match, html[:2000]
    return match.group(1)


def _left(outlook: str) -> int:
    return int(outlook.split(" ", 1)[0])


def _answer(assignment, verdict="correct", relevance=4, comment=""):
    """Answer through the service: the page's submit would take the next lease itself, with a random gold draw."""
    review_submit(
        assignment_id=assignment.pk,
        reviewer=assignment.reviewer,
        idempotency_key=assignment.idempotency_key,
        verdict=verdict,
        relevance=relevance,
        comment=comment,
    )


def _page_words(html: str) -> str:
    """The page without the item and its excerpt (their text is anyone's: a demo excerpt speaks of a "gold answer")."""
    html = re.sub(r'<div class="item-body".*?</section>', "", html, flags=re.S)
    return re.sub(r'<div class="excerpt.*?</div>', "", html, flags=re.S).lower()


def test_items_left_moves_by_one_on_every_lease_and_names_the_same_batch(client, gold_in_old_batch, reviewer):
    client.force_login(reviewer)
    shown = []
    for draw in (REAL, REAL, GOLD, REAL, GOLD, REAL):
        assignment = assignment_next(reviewer=reviewer, gold_draw=draw)
        assert (assignment.stage == Stage.GOLD) == (draw == GOLD)
        shown.append(_outlook(client, assignment))
        _answer(assignment)
    counts = [_left(text) for text in shown]
    assert counts[0] == 33 + 2  # the real items and the gold items this reviewer may still be given
    # Before, during and after a gold item the count moves by exactly one per item, as it does for real ones.
    assert [a - b for a, b in zip(counts, counts[1:], strict=False)] == [1] * 5, shown
    batches = {re.search(r"batch “(.*?)”", text).group(1) for text in shown}
    assert batches == {ImportBatch.objects.exclude(name="Old finished batch").get().name}, shown


def test_with_the_gold_rate_at_zero_no_gold_item_counts_as_left(client, gold_in_old_batch, config, reviewer):
    config.gold_rate = 0.0
    config.save()
    client.force_login(reviewer)
    assert _left(_outlook(client, assignment_next(reviewer=reviewer))) == 33  # none would be handed out


def _lease_view(client, reviewer, draw) -> tuple[str, dict]:
    """The review page and the API lease of the next lease drawn with ``draw``, then everything rolled back: both
    draws start from the same queue state."""

    class _Undo(Exception):
        pass

    seen: dict = {}
    with pytest.raises(_Undo), transaction.atomic():
        assignment = assignment_next(reviewer=reviewer, gold_draw=draw, qa_type="short_answer")
        seen["stage"] = assignment.stage
        seen["html"] = client.get(reverse("review_assignment", args=[assignment.pk])).content.decode()
        seen["api"] = AssignmentSerializer(assignment).data
        seen["assignment"] = assignment
        raise _Undo
    return seen


def _without_the_item(html: str, seen: dict) -> str:
    """The page with the item's own content and the lease's identity (number, key, time, CSRF token) cut out."""
    assignment = seen["assignment"]
    item = QAItem.objects.get(pk=assignment.item_id)
    html = re.sub(r'<section class="card" id="item-card">.*?</section>', "ITEM", html, flags=re.S)
    html = re.sub(r"<h2>Source excerpt</h2>.*?</section>", "EXCERPT", html, flags=re.S)
    # Quoting from the excerpt is offered when the item has one: the item's own content, gold or not.
    html = re.sub(r"\(optional<span class=\"keys\">.*?</span>\)", "(optional)", html, flags=re.S)
    html = html.replace(
        '<button type="button" class="quote-selection" id="quote-selection" hidden>Quote this</button>', ""
    )
    for value in (str(assignment.idempotency_key), item.uid):
        html = html.replace(value, "X")
    html = re.sub(rf"/review/{assignment.pk}/", "/review/N/", html)
    html = re.sub(r'data-assignment="\d+"', "", html)
    html = re.sub(r"[A-Za-z0-9]{64}", "CSRF", html)  # the CSRF token (masked afresh on every page)
    html = re.sub(r'data-(expires|now)="[^"]*"', "TIME", html)  # the hold's end and the page's clock
    return re.sub(r"<time[^>]*>.*?</time>", "TIME", html, flags=re.S)


def test_a_gold_lease_and_a_real_lease_in_the_same_queue_state_differ_only_in_the_item(
    client, gold_in_old_batch, reviewer
):
    client.force_login(reviewer)
    _answer(assignment_next(reviewer=reviewer, gold_draw=REAL))  # the guideline read, one answer given
    real = _lease_view(client, reviewer, REAL)
    gold = _lease_view(client, reviewer, GOLD)
    assert (real["stage"], gold["stage"]) == (Stage.PRIMARY, Stage.GOLD)
    assert _without_the_item(real["html"], real) == _without_the_item(gold["html"], gold)
    # The API lease: the same fields, the same guideline (same type), the same hold.
    assert real["api"].keys() == gold["api"].keys() and real["api"]["item"].keys() == gold["api"]["item"].keys()
    assert real["api"]["guideline"] == gold["api"]["guideline"]
    hold = [round((a["assignment"].expires_at - a["assignment"].created_at).total_seconds()) for a in (real, gold)]
    assert hold[0] == hold[1] == 1800


def test_gold_answers_are_listed_with_the_reviews_and_z_opens_the_latest(client, gold_in_old_batch, reviewer):
    client.force_login(reviewer)
    real = assignment_next(reviewer=reviewer, gold_draw=REAL)
    _answer(real, comment="real probe")
    gold = assignment_next(reviewer=reviewer, gold_draw=GOLD)
    _answer(gold, "incorrect", 2, comment="probe two")
    assert GoldAnswer.objects.filter(assignment=gold).exists()

    assert [a.assignment_id for a in reviews_recent_of(reviewer)] == [gold.pk, real.pk]
    mine = client.get(reverse("review_mine")).content.decode()
    assert gold.item.uid in mine and real.item.uid in mine
    assert reverse("review_edit", args=[gold.pk]) in mine
    assert "gold" not in _page_words(mine)

    # z opens the gold answer: read-only, with the words a locked review has, never "gold".
    assert review_last_of(reviewer).assignment_id == gold.pk
    response = client.get(reverse("review_last"))
    assert response["Location"] == reverse("review_edit", args=[gold.pk])
    page = client.get(response["Location"]).content.decode()
    assert response.status_code == 302 and "probe two" in page and "Incorrect" in page
    assert EDIT_REFUSED_SECOND_MESSAGE in page and 'id="edit-form"' not in page
    assert "gold" not in _page_words(page)

    # After a real review, z goes to that one.
    later = assignment_next(reviewer=reviewer, gold_draw=REAL)
    _answer(later)
    assert client.get(reverse("review_last"))["Location"] == reverse("review_edit", args=[later.pk])


def test_changing_a_gold_answer_is_refused_as_a_second_review_is(
    client, gold_in_old_batch, config, make_user, reviewer, review
):
    """Right after the answer a second review is locked and a first one can be changed; a gold answer is locked the
    way a second review is (the generic "moved on" words, at once, would point at gold)."""
    client.force_login(reviewer)
    gold = assignment_next(reviewer=reviewer, gold_draw=GOLD)
    _answer(gold, comment="as sent")
    refused_gold = client.post(reverse("review_edit", args=[gold.pk]), {"verdict": "incorrect", "relevance": "1"})
    assert GoldAnswer.objects.get(assignment=gold).verdict == "correct"

    config.second_share = 1.0
    config.save()
    review(assignment_next(reviewer=make_user("reviewer"), gold_draw=REAL), "correct", 4)
    second = assignment_next(reviewer=reviewer, gold_draw=REAL)
    assert second.stage == Stage.SECONDARY
    _answer(second, comment="as sent")
    refused_second = client.post(reverse("review_edit", args=[second.pk]), {"verdict": "incorrect", "relevance": "1"})

    assert refused_gold.status_code == refused_second.status_code == 409
    for response in (refused_gold, refused_second):
        assert EDIT_REFUSED_SECOND_MESSAGE in response.content.decode()
        assert "gold" not in _page_words(response.content.decode())


def test_someone_elses_gold_answer_is_not_found(client, gold_in_old_batch, make_user, reviewer):
    gold = assignment_next(reviewer=reviewer, gold_draw=GOLD)
    client.force_login(reviewer)
    _answer(gold)
    client.force_login(make_user("reviewer"))
    response = client.get(reverse("review_edit", args=[gold.pk]), follow=True)
    assert gold.item.question[:30] not in response.content.decode()
    assert not Review.objects.exists()
