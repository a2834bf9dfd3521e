"""Nugget studies: only items with validated nuggets take part (the rest counted), the nugget version and each
answer's sentences are frozen, and the selectors hand the submitted labels and marks to the reports."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from annotation.models import NuggetSet
from metrics.nuggets import split_sentences
from portal.errors import DomainError
from ranking.models import StudyAnswer
from ranking.selectors.studies import study_nugget_labels, study_sentence_marks
from ranking.services.queue import task_next
from ranking.services.studies import study_create
from ranking.services.submissions import task_slots, task_submit

from .conftest import SYSTEM_NAMES, full_answers
from .nuggets import validated_nuggets

pytestmark = pytest.mark.django_db


@pytest.fixture
def nugget_items(systems_with_outputs, sample_items):
    """Items 0–3 have a validated nugget list, item 4 only a draft, item 5 an empty validated list."""
    for item in sample_items[:4]:
        validated_nuggets(item)
    validated_nuggets(sample_items[4], status=NuggetSet.Status.DRAFT)
    validated_nuggets(sample_items[5], nuggets=())
    return sample_items[:4]


def test_nugget_study_takes_only_items_with_validated_nuggets_and_counts_the_rest(nugget_items, organizer):
    result = study_create(name="nuggets", systems=SYSTEM_NAMES, ask_nuggets=True, user=organizer)
    study = result.study
    assert (result.included, result.excluded, result.excluded_without_nuggets) == (4, 0, 31)
    assert study.ask_nuggets and study.ask_ranking and study.excluded_without_nuggets == 31
    assert "31 item(s) left out because they have no validated nuggets" in result.summary()
    questions = list(study.questions.select_related("item", "nugget_set"))
    assert {q.item_id for q in questions} == {i.pk for i in nugget_items}
    assert all(
        q.nugget_set.status == NuggetSet.Status.VALIDATED and q.nugget_set.item_id == q.item_id for q in questions
    )
    answers = StudyAnswer.objects.filter(question__study=study)
    assert answers.count() == 4 * 3
    assert all(a.sentences == split_sentences(a.text) and a.sentences for a in answers)


def test_a_new_validated_version_does_not_change_a_running_study(nugget_items, organizer):
    study = study_create(name="frozen", systems=SYSTEM_NAMES, ask_nuggets=True, user=organizer).study
    question = study.questions.first()
    frozen = question.nugget_set_id
    NuggetSet.objects.filter(pk=frozen).update(status=NuggetSet.Status.SUPERSEDED)
    validated_nuggets(question.item, nuggets=(("n9", "Another fact.", "vital"),))
    question.refresh_from_db()
    assert question.nugget_set_id == frozen


def test_without_nuggets_nothing_changes(nugget_items, organizer):
    result = study_create(name="plain", systems=SYSTEM_NAMES, user=organizer)
    assert (result.included, result.excluded_without_nuggets) == (35, 0)
    assert not result.study.questions.filter(nugget_set__isnull=False).exists()
    assert not StudyAnswer.objects.filter(question__study=result.study).exclude(sentences=[]).exists()
    assert "nuggets" not in result.summary()


def test_nuggets_only_study_may_have_a_single_answer_but_must_ask_something(nugget_items, organizer):
    study = study_create(
        name="one answer",
        systems=SYSTEM_NAMES[:1],
        include_reference=False,
        ask_ranking=False,
        ask_nuggets=True,
        user=organizer,
    ).study
    assert StudyAnswer.objects.filter(question__study=study).count() == 4
    with pytest.raises(DomainError, match="two answers to rank"):
        study_create(name="x", systems=SYSTEM_NAMES[:1], include_reference=False, user=organizer)
    with pytest.raises(DomainError, match="choose what rankers do"):
        study_create(name="y", systems=SYSTEM_NAMES, ask_ranking=False, user=organizer)


def test_no_item_with_nuggets_is_refused_with_the_counts(systems_with_outputs, organizer):
    with pytest.raises(DomainError, match=r"0 item\(s\) lack an output, 35 lack validated nuggets"):
        study_create(name="none", systems=SYSTEM_NAMES, ask_nuggets=True, user=organizer)


def test_create_study_command_and_page_offer_nuggets(nugget_items, capsys, organizer_client):
    call_command("create_study", "cmd nuggets", "--system", SYSTEM_NAMES[0], "--nuggets", "--no-ranking")
    assert "4 question(s); 0 item(s) left out" in capsys.readouterr().out
    page = organizer_client.get("/organize/studies/new/").content.decode()
    assert "Check each answer against the item&#x27;s nuggets" in page
    response = organizer_client.post(
        "/organize/studies/new/",
        {"name": "page study", "systems": [], "seed": 0, "overlap": 2, "tag_scale": "good, bad", "unblinding_rate": 0},
    )
    assert "Choose what rankers do" in response.content.decode()


def _submit(study, ranker, labels, marks=None):
    task = task_next(study=study, ranker=ranker)
    slots = task_slots(task)
    task_submit(
        task_id=task.pk,
        ranker=ranker,
        answers=full_answers(task),
        nugget_labels={slot: dict(labels) for slot in slots},
        sentence_marks=marks(task) if marks else None,
    )
    return task


def test_selectors_return_every_submitted_label_and_every_answer_s_marks(nugget_items, organizer, make_user):
    study = study_create(name="sel", systems=SYSTEM_NAMES, ask_nuggets=True, overlap=2, user=organizer).study
    first, second = make_user("ranker"), make_user("ranker")
    labels = {"n1": "support", "n2": "partial", "n3": "not_support"}
    task = _submit(study, first, labels, marks=lambda t: {"A": {"0": "wrong"}})
    task_next(study=study, ranker=second)  # leased, not submitted: not in the rows
    rows = list(study_nugget_labels(study))
    assert len(rows) == 3 * 3  # three answers × three nuggets
    row = next(r for r in rows if r["slot"] == "A" and r["nugget_id"] == "n2")
    answer_a = StudyAnswer.objects.select_related("system", "question__item").get(pk=task.order[0])
    assert row["item_uid"] == answer_a.question.item.uid and row["system"] == answer_a.system.name
    assert (row["importance"], row["label"], row["labeller"]) == ("okay", "partial", first.pseudonym)
    marks = study_sentence_marks(study)
    assert len(marks) == 3
    mark_a = next(m for m in marks if m["slot"] == "A")
    assert mark_a["marked"] == [0] and mark_a["wrong"] == [0] and mark_a["unsupported"] == []
    assert mark_a["n_sentences"] == len(answer_a.sentences) and mark_a["system"] == answer_a.system.name
    assert all(m["marked"] == [] for m in marks if m["slot"] != "A")
    assert next(study_nugget_labels(study, identities=True))["labeller"] == first.email


def test_hallucination_and_harm_questions_need_the_ranking(nugget_items, organizer):
    with pytest.raises(DomainError, match="part of the ranking form"):
        study_create(name="h", systems=SYSTEM_NAMES, ask_ranking=False, ask_nuggets=True, ask_harm=True)


def test_api_creates_a_nugget_study_and_reports_the_exclusions(nugget_items, organizer_client):
    response = organizer_client.post(
        "/api/studies/",
        {"name": "API nuggets", "systems": SYSTEM_NAMES, "ask_nuggets": True, "ask_ranking": False},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["included"], body["excluded_without_nuggets"]) == (4, 31)
    assert body["study"]["ask_nuggets"] and not body["study"]["ask_ranking"]
    refused = organizer_client.post(
        "/api/studies/",
        {"name": "API nothing", "systems": SYSTEM_NAMES, "ask_ranking": False},
        content_type="application/json",
    )
    assert refused.status_code == 400 and "choose what rankers do" in refused.content.decode()
    for overlap in (501, 40000):  # past the small-integer column: refused as input, not a 500 from the database
        too_many = organizer_client.post(
            "/api/studies/",
            {"name": "API overlap", "systems": SYSTEM_NAMES, "ask_nuggets": True, "overlap": overlap},
            content_type="application/json",
        )
        assert too_many.status_code == 400 and "500" in too_many.content.decode()
    page = organizer_client.get(f"/organize/studies/{body['study']['id']}/").content.decode()
    assert "31 items left out: no validated nuggets" in page and "Assessments submitted" in page
