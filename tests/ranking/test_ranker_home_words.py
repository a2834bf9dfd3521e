"""The ranker's pages: each study's Guidelines link opens its guidelines (and starts nothing); answers that are
word for word the same are named as a list is written ("B, C and D")."""

from __future__ import annotations

import re

import pytest

from ranking.models import RankingTask, StudyAnswer

pytestmark = pytest.mark.django_db


def test_the_guidelines_link_opens_the_studys_guidelines_and_takes_no_question(make_study, make_user, client):
    with_guidelines = make_study(name="Written", guidelines="Rank the safest answer first.\n\nIgnore the style.")
    make_study(name="Unwritten", guidelines="")
    ranker = make_user("ranker")
    client.force_login(ranker)
    html = client.get("/rank/").content.decode()
    links = re.findall(r'<a class="button secondary" href="([^"]+)">Guidelines</a>', html)
    assert links == [f"/rank/studies/{with_guidelines.pk}/guidelines/"]  # a study without guidelines has no link
    page = client.get(links[0]).content.decode()
    assert "<p>Rank the safest answer first.</p>" in page and "<p>Ignore the style.</p>" in page
    assert not RankingTask.objects.filter(ranker=ranker).exists()


def test_a_closed_studys_guidelines_are_not_served(make_study, make_user, client):
    study = make_study(guidelines="Secret until it opens.")
    study.state = study.State.CLOSED
    study.save(update_fields=["state"])
    client.force_login(make_user("ranker"))
    assert client.get(f"/rank/studies/{study.pk}/guidelines/").status_code == 404


def test_three_identical_answers_are_named_as_a_list(make_study, make_user, client):
    study = make_study()
    for question in study.questions.all():
        StudyAnswer.objects.filter(question=question).update(text="The same answer, word for word.")
    ranker = make_user("ranker")
    client.force_login(ranker)
    response = client.post(f"/rank/studies/{study.pk}/next/")
    page = client.get(response["Location"]).content.decode()
    assert len(RankingTask.objects.get(ranker=ranker).order) == 3  # two systems and the reference answer
    note = re.search(r'<p class="identical-note"[^>]*>(.*?)</p>', page, re.S).group(1)
    assert note.startswith("Answers A, B and C are identical, word for word.")
