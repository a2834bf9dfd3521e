"""Whoever was shown an item's answer anywhere in the portal (it is the reference answer of every study) is never
handed that item's question in a study that includes the reference: nugget work, vetting, adjudication, an item page.
The study page tells the organizer how many questions each ranker is excluded from."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, NuggetSet, NuggetTask, QAItem
from annotation.services.queue import assignment_next
from portal.errors import NotAllowed
from portal.services import person_update
from ranking.models import RankingTask
from ranking.services.queue import task_next
from ranking.services.submissions import task_submit

from .conftest import full_answers
from .nuggets import validated_nuggets

pytestmark = pytest.mark.django_db


def _handed(study, ranker) -> set[int]:
    """Every item whose question the queue hands ``ranker`` (ranking each one), until nothing is left."""
    items = set()
    while (task := task_next(study=study, ranker=ranker)) is not None:
        items.add(task.question.item_id)
        task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task))
    return items


def _short_answer_items() -> list[QAItem]:
    return list(QAItem.objects.filter(qa_type="short_answer").order_by("id"))


def test_a_ranker_who_wrote_or_validated_an_items_nuggets_is_never_handed_its_question(make_study, make_user):
    written, validated, settled, untouched, leased = _short_answer_items()
    ranker = make_user("ranker")
    draft = validated_nuggets(written, status=NuggetSet.Status.DRAFT)
    NuggetSet.objects.filter(pk=draft.pk).update(created_by=ranker)
    checked = validated_nuggets(validated)
    NuggetSet.objects.filter(pk=checked.pk).update(validated_by=ranker)
    decided = validated_nuggets(settled)
    NuggetSet.objects.filter(pk=decided.pk).update(created_by=ranker, origin=NuggetSet.Origin.ADJUDICATION)
    # a writing lease that ran out without a draft: the page showed the answer all the same
    NuggetTask.objects.create(
        item=leased, person=ranker, stage="write", status="released", expires_at=timezone.now() - timedelta(hours=1)
    )
    study = make_study(qa_types=["short_answer"], overlap=2)
    assert _handed(study, ranker) == {untouched.pk}
    # another physician is handed every question
    assert _handed(study, make_user("ranker")) == {item.pk for item in _short_answer_items()}


def test_a_reviewer_who_also_ranks_is_never_handed_the_question_of_an_item_they_vetted(make_study, make_user, client):
    both = make_user("reviewer", "ranker")
    lease = assignment_next(reviewer=both, qa_type="short_answer")  # the review page shows the answer
    study = make_study(qa_types=["short_answer"])
    handed = _handed(study, both)
    assert lease.item_id not in handed and len(handed) == 4
    # the person is told how many, never which
    client.force_login(both)
    page = client.get(reverse("ranking_next", args=[study.pk]) + "?done=1").content.decode()
    assert "1 of the 5 questions is not offered to you" in page and lease.item.uid not in page


def test_someone_who_opened_an_items_page_as_organizer_never_ranks_its_question(make_study, make_user, client):
    item, *_ = _short_answer_items()
    person, other_organizer = make_user("organizer"), make_user("organizer")
    client.force_login(person)
    assert client.get(reverse("item_detail", args=[item.uid])).status_code == 200
    person_update(user=person, name="Dr Former Organizer", institution=None, roles=["ranker"], by=other_organizer)
    study = make_study(qa_types=["short_answer"])
    assert item.pk not in _handed(study, person)


def test_a_question_taken_before_the_answer_was_seen_is_withdrawn(make_study, make_user):
    both = make_user("reviewer", "ranker")
    study = make_study(qa_types=["short_answer"], overlap=1)
    task = task_next(study=study, ranker=both)
    # then this person is given the same item to review (the review page shows its answer)
    item = task.question.item
    Assignment.objects.create(item=item, reviewer=both, stage="primary", expires_at=timezone.now())
    with pytest.raises(NotAllowed, match="recognise the reference"):
        task_submit(task_id=task.pk, ranker=both, answers=full_answers(task))
    following = task_next(study=study, ranker=both)
    assert following is not None and following.question.item_id != item.pk
    assert RankingTask.objects.get(pk=task.pk).status == RankingTask.Status.RELEASED  # its slot is free again
    assert task_next(study=study, ranker=make_user("ranker")).question_id == task.question_id


def test_nothing_is_withheld_in_a_study_without_the_reference(make_study, make_user):
    both = make_user("reviewer", "ranker")
    lease = assignment_next(reviewer=both, qa_type="short_answer")
    study = make_study(qa_types=["short_answer"], include_reference=False)
    assert lease.item_id in _handed(study, both)


def test_the_study_page_says_how_many_questions_each_ranker_is_excluded_from(make_study, make_user, organizer_client):
    both = make_user("reviewer", "ranker", email="dr.vetted@test.portal")
    make_user("ranker", email="dr.fresh@test.portal")
    for _ in range(2):
        lease = assignment_next(reviewer=both, qa_type="short_answer")
        lease.status = "released"
        lease.save()
    study = make_study(qa_types=["short_answer"], overlap=2)
    page = organizer_client.get(reverse("study_detail", args=[study.pk])).content.decode()
    table = page[page.index('id="ranker-exclusions"') :]
    rows = {row.split("</td>")[0].rsplit(">", 1)[-1]: row for row in table.split("<tr>")[2:]}
    assert "3 of 5" in rows["dr.vetted@test.portal"] and '<td class="num">2</td>' in rows["dr.vetted@test.portal"]
    assert "5 of 5" in rows["dr.fresh@test.portal"] and '<td class="num">0</td>' in rows["dr.fresh@test.portal"]
    assert "2 questions can be taken by fewer than 2 of the rankers below" in page
