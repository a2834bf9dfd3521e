"""What the ranking pages add around the ranking: skipped counts, the source passage when the study shows it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ranking.services.queue import task_next, task_release

pytestmark = pytest.mark.django_db


@pytest.fixture
def leased(make_study, make_user):
    ranker = make_user("ranker")
    return task_next(study=make_study(sample_size=2), ranker=ranker), ranker


def test_start_and_organizer_pages_say_how_many_were_skipped(client, leased, organizer):
    task, ranker = leased
    task_release(task=task, ranker=ranker)
    client.force_login(ranker)
    start = client.get(reverse("ranking_next", args=[task.study_id])).content.decode()
    assert "You skipped 1: it comes back after the others." in start
    home = client.get(reverse("ranking_home")).content.decode()
    assert "1 skipped, they come back at the end" in home
    assert client.get("/api/ranking/studies/").json()[0]["skipped"] == 1
    client.force_login(organizer)
    detail = client.get(reverse("study_detail", args=[task.study_id])).content.decode()
    assert "Skipped, not ranked yet</th><td>1 " in detail


def test_source_passage_reaches_rankers_only_when_the_study_shows_it(client, make_study, make_user):
    from annotation.models import SourcePassage

    shown = make_study(sample_size=1, show_passage=True)
    hidden = make_study(sample_size=1)
    for study in (shown, hidden):
        item = study.questions.get().item
        passage, _ = SourcePassage.objects.get_or_create(
            paragraph_id=item.paragraph_id or f"p-{item.pk}", defaults={"text": "PASSAGE-TEXT about the question."}
        )
        SourcePassage.objects.filter(pk=passage.pk).update(text="PASSAGE-TEXT about the question.")
        type(item).objects.filter(pk=item.pk).update(passage=passage)
    ranker = make_user("ranker")
    client.force_login(ranker)
    pages = {}
    for study in (shown, hidden):
        task = task_next(study=study, ranker=ranker)
        pages[study.pk] = client.get(reverse("ranking_task", args=[task.pk])).content.decode()
        api = client.get(f"/api/ranking/tasks/{task.pk}/").json()
        assert ("passage" in api["question"]) == (study is shown)
    assert "PASSAGE-TEXT" in pages[shown.pk] and "Source passage" in pages[shown.pk]
    assert "PASSAGE-TEXT" not in pages[hidden.pk]
