"""The study page counts "I cannot tell" answers to the unblinding check (they were read as "no guesses yet"),
lists its extra questions with separators, and closing the study asks for confirmation first (usability report
F34)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ranking.models import RankingTask, Study
from ranking.rules.rankings import UNBLINDING_NO_IDEA
from ranking.selectors.studies import study_progress
from ranking.services.queue import task_next

pytestmark = pytest.mark.django_db


def _answered(study, rankers, guesses):
    """Each ranker takes questions; their submitted tasks carry the given unblinding answers, in turn."""
    tasks = []
    for ranker in rankers:
        while len(tasks) < len(guesses) and (task := task_next(study=study, ranker=ranker)) is not None:
            tasks.append(task)
            RankingTask.objects.filter(pk=task.pk).update(status=RankingTask.Status.SUBMITTED)
    for task, guess in zip(tasks, guesses, strict=True):
        RankingTask.objects.filter(pk=task.pk).update(
            ask_unblinding=True, unblinding_guess=guess, unblinding_correct=guess == "A"
        )


def test_cannot_tell_answers_are_counted(make_study, make_user, organizer_client):
    study = make_study(sample_size=4, overlap=1, unblinding_rate=0.5, ask_harm=True)
    _answered(study, [make_user("ranker")], [UNBLINDING_NO_IDEA] * 3)
    progress = study_progress(study=study)
    assert progress["unblinding_asked"] == 3 and progress["unblinding_guessed"] == 0
    assert progress["unblinding_cannot_tell"] == 3
    page = organizer_client.get(reverse("study_detail", args=[study.pk])).content.decode()
    assert "asked 3 times:\n        no guesses; “I cannot tell” 3 times" in page
    assert "no guesses yet" not in page
    assert "patient harm; unblinding check on 50% of questions" in page


def test_guesses_and_cannot_tell_side_by_side(make_study, make_user, organizer_client):
    study = make_study(sample_size=4, overlap=1, unblinding_rate=1.0)
    _answered(study, [make_user("ranker")], ["A", "B", UNBLINDING_NO_IDEA])
    progress = study_progress(study=study)
    assert (progress["unblinding_guessed"], progress["unblinding_correct"], progress["unblinding_cannot_tell"]) == (
        2,
        1,
        1,
    )
    page = organizer_client.get(reverse("study_detail", args=[study.pk])).content.decode()
    assert "1 of 2 guesses named the reference" in page and "“I cannot tell” 1 time<" in page


def test_closing_asks_first_and_reopening_does_not(make_study, organizer_client):
    study = make_study(sample_size=2)
    detail = organizer_client.get(reverse("study_detail", args=[study.pk])).content.decode()
    assert "Close the study…" in detail
    confirm = organizer_client.get(reverse("study_state", args=[study.pk]))
    assert confirm.status_code == 200
    study.refresh_from_db()
    assert study.state == Study.State.OPEN  # looking at the confirmation closes nothing
    assert "accepts no more submissions" in confirm.content.decode()
    organizer_client.post(reverse("study_state", args=[study.pk]), {"state": "closed"})
    study.refresh_from_db()
    assert study.state == Study.State.CLOSED
    # Closed: the confirmation page has nothing to confirm and sends back to the study.
    assert organizer_client.get(reverse("study_state", args=[study.pk]))["Location"] == reverse(
        "study_detail", args=[study.pk]
    )


@pytest.mark.parametrize("role", ["reviewer", "ranker"])
def test_the_close_confirmation_is_for_organizers(make_study, client, make_user, role):
    study = make_study(sample_size=2)
    client.force_login(make_user(role))
    assert client.get(reverse("study_state", args=[study.pk])).status_code == 403


def test_the_study_form_warns_when_it_asks_more_rankers_than_may_rank(
    systems_with_outputs, organizer_client, make_user
):
    """Usability report F18: two people may rank, the study asks three per question."""
    from ranking.models import System

    make_user("ranker"), make_user("ranker")
    form = organizer_client.get(reverse("study_create")).content.decode()
    assert "2 people have the ranker role now" in form
    assert 'name="overlap" value="2"' in form  # a new form asks no more rankers than there are
    data = {
        "name": "Too many rankers",
        "systems": list(System.objects.values_list("pk", flat=True)),
        "sample_size": "3",
        "seed": "2",
        "ask_ranking": "on",
        "overlap": "3",
        "tag_scale": "good, okay, bad",
        "unblinding_rate": "0",
    }
    response = organizer_client.post(reverse("study_create"), data, follow=True)
    page = response.content.decode()
    assert "3 of the 3 questions cannot be complete yet: each needs 3 rankers, and only 2 people may rank." in page
    # Enough rankers: no warning.
    data |= {"name": "Enough rankers", "overlap": "2"}
    page = organizer_client.post(reverse("study_create"), data, follow=True).content.decode()
    assert "cannot be complete yet" not in page


def test_the_study_list_says_what_rankers_do_and_what_was_left_out(make_study, organizer_client):
    """Usability report F13: "9 nuggets" read as a count of nuggets; "0 + 6 without …" as a sum."""
    make_study(name="Ranked", sample_size=2)
    page = organizer_client.get(reverse("study_list")).content.decode()
    row = page[page.index("Ranked</a>") :].split("</tr>")[0]
    assert "<td>2</td>" in row and "<td>rank</td>" in row and "<td>none</td>" in row
