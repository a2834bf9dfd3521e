"""A designed physician sample (issue #43): the inclusion probabilities (sum, caps, floor, by hand), the seeded draw
recorded with the study and audited, the refusals, the queue handing out the drawn questions only, a designed study
complete once they are ranked, and the organizer's form on the study page."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from analytics.models import JudgeScore
from analytics.services.physician_sample import FLOOR, design_weights, inclusion_probabilities, physician_sample_draw
from portal.errors import DomainError
from portal.models import AuditEntry
from ranking.models import RankingTask, StudyAnswer, StudyQuestion
from ranking.selectors.studies import ranker_progress, study_progress
from ranking.services.queue import task_next
from ranking.services.submissions import task_submit

from .conftest import SYSTEM_NAMES, full_answers

QUESTIONS = 20


def test_probabilities_capped_at_one_the_excess_spread_over_the_others():
    # weights 1, 1, 1, 97, two expected: the heavy one's 1.94 is capped at 1 and the other three share the last one
    got = inclusion_probabilities([1, 1, 1, 97], 2)
    assert got == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1.0])
    # without the floor the same by hand: 2 × 0.97 capped; 1 / 3 each
    assert inclusion_probabilities([1, 1, 1, 97], 2, floor=0) == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1.0])


def test_probabilities_sum_to_the_expected_size_and_keep_the_floor():
    weights = np.r_[np.zeros(60), np.linspace(0.1, 5, 40)]
    for expected in (1, 7.5, 30, 99):
        got = inclusion_probabilities(weights, expected)
        assert got.sum() == pytest.approx(expected)
        assert got.max() <= 1
        assert got.min() >= FLOOR * expected / weights.size - 1e-12  # a question weighing nothing can be drawn
    # proportional where nothing is capped: a zero weight gets the floor exactly, by hand 0.02 × 7.5 / 100
    got = inclusion_probabilities(weights, 7.5)
    assert got[0] == pytest.approx(FLOOR * 7.5 / 100)
    assert inclusion_probabilities(np.zeros(5), 2) == pytest.approx([0.4] * 5)  # no weight at all: uniform
    assert inclusion_probabilities(np.ones(5), 5) == pytest.approx([1.0] * 5)  # everything


def test_design_weights_by_hand():
    # scores mapped to [0, 1] over all (here already 0..1); an unscored question weighs as much as the heaviest
    scores = [[0.5, 0.5], [0.0, 1.0], [1.0, 1.0], []]
    assert design_weights("judge_uncertain", scores) == pytest.approx([1.0, 0.0, 0.0, 1.0])
    assert design_weights("systems_differ", scores) == pytest.approx([0.0, 0.25, 0.0, 0.25])
    # on another scale (0..10) the same: the mapping is the judge's own range in the study
    assert design_weights("judge_uncertain", [[5, 5], [0, 10]]) == pytest.approx([1.0, 0.0])


@pytest.fixture
def study(make_study):
    return make_study(sample_size=QUESTIONS, overlap=1)


def score_answers(study, judge="llm", score=lambda position, system: 0.5) -> None:
    """The judge scores every model answer (the reference's too, which the draw leaves out)."""
    for answer in StudyAnswer.objects.filter(question__study=study).select_related("question", "system"):
        value = 0.99 if answer.system.is_reference else score(answer.question.position, answer.system.name)
        JudgeScore.objects.create(answer=answer, judge=judge, score=value)


@pytest.mark.django_db
def test_uniform_draw_is_seeded_recorded_and_audited(study, organizer):
    physician_sample_draw(study, share=0.5, design="uniform", seed=7, by=organizer)
    questions = list(StudyQuestion.objects.filter(study=study).order_by("position"))
    chances = [q.inclusion_probability for q in questions]
    assert chances == pytest.approx([0.5] * QUESTIONS)
    drawn = [q.physician_sampled for q in questions]
    # Poisson sampling with the seed: the same uniform numbers, in the questions' order
    assert drawn == list(np.random.default_rng(7).random(QUESTIONS) < 0.5)
    study.refresh_from_db()
    design = study.physician_sample
    assert {k: design[k] for k in ("design", "judge", "share", "seed", "by", "questions", "sampled")} == {
        "design": "uniform",
        "judge": None,
        "share": 0.5,
        "seed": 7,
        "by": organizer.pk,
        "questions": QUESTIONS,
        "sampled": sum(drawn),
    }
    assert design["drawn_at"]
    entry = AuditEntry.objects.get(action="physician_sample_drawn")
    assert entry.object_id == str(study.pk) and entry.after["seed"] == 7 and entry.actor_id == organizer.pk
    # drawn again with the seed: the same sample
    physician_sample_draw(study, share=0.5, design="uniform", seed=7, by=organizer)
    assert [q.physician_sampled for q in StudyQuestion.objects.filter(study=study).order_by("position")] == drawn


@pytest.mark.django_db
def test_judge_uncertain_draw_leans_towards_scores_near_the_middle(study, organizer):
    # the first four questions (positions 0-3): the judge scores both systems 0.5 (unsure); the others 0 and 1 (sure either way)
    score_answers(study, score=lambda position, system: 0.5 if position < 4 else float(system == SYSTEM_NAMES[0]))
    physician_sample_draw(study, number=2, design="judge_uncertain", judge="llm", seed=1, by=organizer)
    chances = dict(StudyQuestion.objects.filter(study=study).values_list("position", "inclusion_probability"))
    # by hand: weights 1 (four questions) and 0 (sixteen), mixed with 2 % of uniform; nothing over 1
    sure = 2 * FLOOR / QUESTIONS
    unsure = 2 * ((1 - FLOOR) / 4 + FLOOR / QUESTIONS)
    assert [chances[p] for p in range(4)] == pytest.approx([unsure] * 4)
    assert [chances[p] for p in range(4, QUESTIONS)] == pytest.approx([sure] * 16)
    assert sum(float(c or 0) for c in chances.values()) == pytest.approx(2)


@pytest.mark.django_db
def test_systems_differ_draw_caps_at_one(study, organizer):
    # the first question (position 0): the systems scored 0 and 1; every other question both 0.3: all the weight on it
    score_answers(study, score=lambda position, system: float(system == SYSTEM_NAMES[0]) if position == 0 else 0.3)
    physician_sample_draw(study, number=3, design="systems_differ", judge="llm", seed=3, by=organizer)
    first = StudyQuestion.objects.get(study=study, position=0)
    assert first.inclusion_probability == 1.0 and first.physician_sampled
    others = StudyQuestion.objects.filter(study=study).exclude(position=0)
    assert [q.inclusion_probability for q in others] == pytest.approx([2 / 19] * 19)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"share": 0.0}, "more than 0 and at most 1"),
        ({"share": 1.5}, "more than 0 and at most 1"),
        ({"number": 0}, "from 1 to 20"),
        ({"number": QUESTIONS + 1}, "from 1 to 20"),
        ({"share": 0.5, "number": 3}, "not both"),
        ({}, "not both"),
        ({"share": 0.5, "design": "judge_uncertain"}, "needs a judge"),
        ({"share": 0.5, "design": "systems_differ", "judge": "nobody"}, "No scores of a judge named 'nobody'"),
        ({"share": 0.5, "design": "cluster"}, "Unknown design"),
    ],
)
def test_refusals(study, organizer, options, message):
    score_answers(study)
    with pytest.raises(DomainError, match=message):
        physician_sample_draw(study, by=organizer, **options)
    assert not AuditEntry.objects.filter(action="physician_sample_drawn").exists()
    assert not StudyQuestion.objects.filter(study=study, inclusion_probability__isnull=False).exists()


@pytest.mark.django_db
def test_refused_once_a_task_exists(study, organizer, make_user):
    task_next(study=study, ranker=make_user("ranker"))
    with pytest.raises(DomainError, match="Physicians have started"):
        physician_sample_draw(study, share=0.5, by=organizer)


@pytest.mark.django_db
def test_queue_hands_only_the_drawn_questions_and_the_study_completes(study, organizer, make_user):
    physician_sample_draw(study, share=0.3, seed=5, by=organizer)
    drawn = set(StudyQuestion.objects.filter(study=study, physician_sampled=True).values_list("pk", flat=True))
    assert 0 < len(drawn) < QUESTIONS
    progress = study_progress(study=study)
    assert (progress["questions"], progress["needed"], progress["complete_questions"]) == (len(drawn), len(drawn), 0)
    ranker = make_user("ranker")
    assert ranker_progress(study=study, ranker=ranker)["questions"] == len(drawn)
    handed = set()
    while (task := task_next(study=study, ranker=ranker)) is not None:
        task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task))
        handed.add(task.question_id)
    assert handed == drawn
    progress = study_progress(study=study)
    assert progress["complete_questions"] == progress["questions"] == len(drawn)
    assert progress["submitted"] == progress["needed"]


def page(client, study) -> str:
    return client.get(reverse("study_detail", args=[study.pk])).content.decode()


def sample_page(client, study) -> str:
    return client.get(reverse("study_physician_sample", args=[study.pk])).content.decode()


@pytest.mark.django_db
def test_the_form_on_the_study_page_draws_and_states_the_design(study, organizer, client):
    score_answers(study, judge="judge-X")
    client.force_login(organizer)
    assert reverse("study_physician_sample", args=[study.pk]) in page(client, study)  # the study page links to it
    before = sample_page(client, study)
    assert "Ask physicians for a sample only" in before and '<option value="judge-X">' in before
    response = client.post(
        reverse("study_physician_sample", args=[study.pk]),
        {"number": "5", "design": "judge_uncertain", "judge": "judge-X", "seed": "9"},
    )
    assert response.status_code == 302
    study.refresh_from_db()
    sampled = StudyQuestion.objects.filter(study=study, physician_sampled=True).count()
    assert study.physician_sample["number"] == 5 and study.physician_sample["sampled"] == sampled
    after = page(client, study)
    assert (
        f"Physicians rank a sample: {sampled} of {QUESTIONS} questions, drawn towards questions where the judge "
        "&#x27;judge-X&#x27; is least certain; the estimates weight each by 1/its chance of being drawn." in after
    )


@pytest.mark.django_db
def test_a_refused_draw_says_why_and_changes_nothing(study, organizer, client):
    client.force_login(organizer)
    response = client.post(
        reverse("study_physician_sample", args=[study.pk]), {"share": "2", "design": "uniform"}, follow=True
    )
    assert (
        "The sample was not drawn: The share must be more than 0 and at most 1, not 2.0." in response.content.decode()
    )
    assert response.redirect_chain[-1][0] == reverse("study_physician_sample", args=[study.pk])
    study.refresh_from_db()
    assert study.physician_sample == {}


@pytest.mark.django_db
def test_the_form_is_gone_once_a_task_exists(study, organizer, client, make_user):
    task_next(study=study, ranker=make_user("ranker"))
    client.force_login(organizer)
    assert "Ask physicians for a sample only" not in page(client, study)
    closed = sample_page(client, study)
    assert "can no longer change" in closed and "<form" not in closed.split('id="physician-sample"')[1]


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["ranker", "reviewer"])
def test_only_organizers_draw(study, make_user, client, role):
    client.force_login(make_user(role))
    response = client.post(reverse("study_physician_sample", args=[study.pk]), {"share": "0.5", "design": "uniform"})
    assert response.status_code == 403
    study.refresh_from_db()
    assert study.physician_sample == {} and not RankingTask.objects.exists()


@pytest.mark.django_db
def test_a_negative_seed_is_refused_not_a_server_error(study, organizer, client):
    with pytest.raises(DomainError, match="seed"):
        physician_sample_draw(study, share=0.5, design="uniform", seed=-5, by=organizer)
    client.force_login(organizer)
    response = client.post(reverse("study_physician_sample", args=[study.pk]), {"share": "0.5", "design": "uniform",
                                                                              "seed": "-5"})  # fmt: skip
    assert response.status_code == 400 and study.physician_sample == {}


@pytest.mark.django_db
def test_the_api_states_the_design_and_each_questions_chance(study, organizer, client, make_user):
    client.force_login(organizer)
    detail = client.get(reverse("api_study_detail", args=[study.pk])).json()
    assert detail["physician_sample"] is None and detail["n_questions"] == QUESTIONS
    physician_sample_draw(study, number=5, design="uniform", seed=3, by=organizer)
    detail = client.get(reverse("api_study_detail", args=[study.pk])).json()
    drawn = list(StudyQuestion.objects.filter(study=study, physician_sampled=True).order_by("position"))
    assert detail["physician_sample"]["design"] == "uniform" and detail["physician_sample"]["seed"] == 3
    assert detail["n_questions"] == len(drawn) == detail["physician_sample"]["sampled"]
    listed = [r for r in client.get("/api/studies/").json() if r["id"] == study.pk][0]
    assert listed["n_questions"] == len(drawn)

    rows = client.get(reverse("api_study_questions", args=[study.pk])).json()
    assert [r["position"] for r in rows] == sorted(r["position"] for r in rows) and len(rows) == QUESTIONS
    assert [r["item_uid"] for r in rows if r["asked"]] == [q.item.uid for q in drawn]
    assert all(r["inclusion_probability"] == pytest.approx(5 / QUESTIONS) for r in rows)

    client.force_login(make_user("ranker"))
    assert client.get(reverse("api_study_questions", args=[study.pk])).status_code == 403
