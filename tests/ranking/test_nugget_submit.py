"""Submitting a nugget assessment: every nugget of every answer labelled, marks on real sentences only, nothing
stored on refusal; through the service, the page form, the API, and the draft."""

from __future__ import annotations

import pytest
from django.urls import reverse

from portal.errors import Conflict
from portal.models import AuditEntry
from ranking.models import NuggetJudgement, RankingDraft, RankingTask, SentenceFlag
from ranking.rules.nuggets import assessment_check
from ranking.services.drafts import BadDraft, draft_save
from ranking.services.queue import task_next
from ranking.services.studies import study_create
from ranking.services.submissions import IncompleteRanking, TaskNotFound, task_slots, task_submit

from .conftest import SYSTEM_NAMES, full_answers
from .nuggets import validated_nuggets

pytestmark = pytest.mark.django_db
ALL_SUPPORT = {"n1": "support", "n2": "support", "n3": "not_support"}


@pytest.fixture
def nugget_study(systems_with_outputs, sample_items, organizer):
    for item in sample_items[:3]:
        validated_nuggets(item)
    return study_create(
        name="assess", systems=SYSTEM_NAMES, ask_nuggets=True, ask_ranking=False, overlap=2, user=organizer
    ).study


@pytest.fixture
def leased(nugget_study, make_user):
    ranker = make_user("ranker")
    return task_next(study=nugget_study, ranker=ranker), ranker


def _labels(task, **overrides):
    return {slot: dict(overrides.get(slot, ALL_SUPPORT)) for slot in task_slots(task)}


def test_check_names_every_problem():
    _, problems = assessment_check(
        slots=["A", "B"],
        nugget_keys=["n1", "n2", "n3"],
        n_sentences={"A": 2, "B": 0},
        labels={"A": {"n1": "support", "n2": "maybe", "n9": "support"}, "C": {}},
        marks={"A": {"2": "wrong", "x": "wrong", "1": "awful"}, "B": {"0": "wrong"}},
    )
    assert "nugget labels: unknown answer(s) C" in problems
    assert "answer A: unknown nugget(s) n9" in problems
    assert "answer A: no label yet for nugget 3 (of 3)" in problems
    assert "answer B: no label yet for nugget 1, 2, 3 (of 3)" in problems
    assert "answer A, nugget n2: label 'maybe' is not one of support, partial, not_support" in problems
    assert "answer A: there is no sentence 2 (its sentences: numbered 0–1)" in problems
    assert "answer A: sentence number 'x' is not a whole number" in problems
    assert "answer A, sentence 1: mark 'awful' is not one of wrong, unsupported" in problems
    assert "answer B: there is no sentence 0 (its sentences: none)" in problems


def test_complete_assessment_is_stored_with_its_marks_and_audited(leased):
    task, ranker = leased
    labels = _labels(task, B={"n1": "partial", "n2": "not_support", "n3": "support"})
    task_submit(task_id=task.pk, ranker=ranker, answers={}, nugget_labels=labels, sentence_marks={"B": {"0": "wrong"}})
    task.refresh_from_db()
    assert task.status == RankingTask.Status.SUBMITTED
    stored = {(j.answer_id, j.nugget.key): j.label for j in NuggetJudgement.objects.filter(task=task)}
    answer_b = task.order[1]
    assert len(stored) == 9 and stored[(answer_b, "n1")] == "partial" and stored[(answer_b, "n3")] == "support"
    flag = SentenceFlag.objects.get(task=task)
    assert (flag.answer_id, flag.index, flag.kind) == (answer_b, 0, "wrong")
    entry = AuditEntry.objects.get(action="ranking_submitted")
    assert entry.after["nugget_labels"]["B"]["n1"] == "partial" and entry.after["sentence_marks"] == {
        "A": {},
        "B": {"0": "wrong"},
        "C": {},
    }


@pytest.mark.parametrize(
    ("labels", "marks", "problem"),
    [
        ({"A": {"n1": "support"}}, None, "answer A: no label yet for nugget 2, 3 (of 3)"),
        ({"A": {**ALL_SUPPORT, "n2": "yes"}}, None, "label 'yes' is not one of"),
        ({}, {"A": {"99": "wrong"}}, "answer A: there is no sentence 99"),
        ({"A": {**ALL_SUPPORT, "foreign": "support"}}, None, "answer A: unknown nugget(s) foreign"),
    ],
)
def test_incomplete_or_bad_assessments_are_refused_and_change_nothing(leased, labels, marks, problem):
    task, ranker = leased
    payload = _labels(task)
    for slot, value in labels.items():
        payload[slot] = value
    with pytest.raises(IncompleteRanking) as refused:
        task_submit(task_id=task.pk, ranker=ranker, answers={}, nugget_labels=payload, sentence_marks=marks)
    assert any(problem in p for p in refused.value.problems), refused.value.problems
    task.refresh_from_db()
    assert task.status == RankingTask.Status.LEASED
    assert not NuggetJudgement.objects.exists() and not SentenceFlag.objects.exists()


def test_a_nugget_of_another_question_is_foreign(leased, nugget_study, make_user):
    task, ranker = leased
    other = task_next(study=nugget_study, ranker=make_user("ranker"))
    while other.question_id == task.question_id:  # overlap 2: the next ranker gets the same question first
        other = task_next(study=nugget_study, ranker=make_user("ranker"))
    foreign = other.question.nugget_set.nuggets.get(key="n1").pk
    payload = _labels(task)
    payload["A"] = {**ALL_SUPPORT, str(foreign): "support"}
    with pytest.raises(IncompleteRanking, match="unknown nugget"):
        task_submit(task_id=task.pk, ranker=ranker, answers={}, nugget_labels=payload)


def test_another_ranker_s_task_is_not_found(leased, make_user):
    task, _ = leased
    with pytest.raises(TaskNotFound):
        task_submit(task_id=task.pk, ranker=make_user("ranker"), answers={}, nugget_labels=_labels(task))


def test_ranking_only_study_refuses_nugget_labels(make_study, make_user):
    ranker = make_user("ranker")
    task = task_next(study=make_study(sample_size=1), ranker=ranker)
    with pytest.raises(IncompleteRanking, match="does not ask for nugget labels"):
        task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task), nugget_labels={"A": {"n1": "x"}})
    empty = {slot: {} for slot in task_slots(task)}  # a client that always sends the fields, empty: nothing given
    task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task), nugget_labels=empty, sentence_marks={})


def test_both_together_need_both(systems_with_outputs, sample_items, organizer, make_user):
    validated_nuggets(sample_items[0])
    study = study_create(name="both", systems=SYSTEM_NAMES, ask_nuggets=True, user=organizer).study
    ranker = make_user("ranker")
    task = task_next(study=study, ranker=ranker)
    with pytest.raises(IncompleteRanking, match="no rank for answer A"):
        task_submit(task_id=task.pk, ranker=ranker, answers={}, nugget_labels=_labels(task))
    with pytest.raises(IncompleteRanking, match="no label yet"):
        task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task))
    task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task), nugget_labels=_labels(task))
    assert NuggetJudgement.objects.filter(task=task).count() == 9
    with pytest.raises(Conflict):
        task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task), nugget_labels=_labels(task))


def test_page_shows_the_assessment_and_its_form_submits_it(client, leased):
    task, ranker = leased
    client.force_login(ranker)
    url = reverse("ranking_task", args=[task.pk])
    page = client.get(url).content.decode()
    assert 'id="nugget-assessment"' in page and 'id="ranked"' not in page  # nuggets only: no ranking widget
    assert 'name="nug_A_1"' in page and 'name="mark_A_0"' in page and "Submit assessment" in page
    post = {"idempotency_key": "k1", "mark_B_0": "unsupported", "mark_C_0": ""}
    post.update({f"nug_{slot}_{i}": "support" for slot in "ABC" for i in (1, 2)})
    refused = client.post(url, post)
    assert refused.status_code == 400
    assert "answer A: no label yet for nugget 3 (of 3)" in refused.content.decode()
    post.update({f"nug_{slot}_3": "not_support" for slot in "ABC"})
    assert client.post(url, post).status_code == 302
    task.refresh_from_db()
    assert task.status == RankingTask.Status.SUBMITTED
    assert list(SentenceFlag.objects.filter(task=task).values_list("index", "kind")) == [(0, "unsupported")]


def test_api_submit_and_refusal(client, leased):
    task, ranker = leased
    client.force_login(ranker)
    url = f"/api/ranking/tasks/{task.pk}/submit/"
    bad = client.post(url, {"nugget_labels": {"A": ALL_SUPPORT}}, content_type="application/json")
    assert bad.status_code == 400 and "answer B: no label yet" in bad.json()["detail"]
    body = {"nugget_labels": _labels(task), "sentence_marks": {"A": {"0": "wrong"}}}
    assert client.post(url, body, content_type="application/json").status_code == 200
    assert SentenceFlag.objects.filter(task=task, kind="wrong").count() == 1


def test_draft_keeps_labels_and_marks_and_refuses_other_values(client, leased):
    task, ranker = leased
    client.force_login(ranker)
    draft = {"order": [], "fields": {"nug_A_1": "partial", "mark_B_0": "wrong"}, "elapsed": 10}
    url = reverse("ranking_task_draft", args=[task.pk])
    assert client.post(url, draft, content_type="application/json").status_code == 200
    assert client.get(url).json()["draft"]["fields"] == {"nug_A_1": "partial", "mark_B_0": "wrong"}
    for fields, error in (({"nug_A_1": "maybe"}, "nug_A_1 must be one of"), ({"mark_A_0": "bad"}, "mark_A_0 must be")):
        with pytest.raises(BadDraft, match=error):
            draft_save(task=task, data={"fields": fields})
    assert RankingDraft.objects.get(task=task).data["fields"]["nug_A_1"] == "partial"
