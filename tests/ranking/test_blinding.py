"""Blinding: nothing a ranker can load names a system, carries a system id, or marks the reference answer."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

from ranking.models import RankingTask, StudyAnswer, System
from ranking.services.studies import study_create

from .conftest import SYSTEM_NAMES

pytestmark = pytest.mark.django_db
SYSTEM_IDS = (987_654_321, 987_654_322)
ALLOWED_DATA_ATTRIBUTES = {
    "data-slot",
    "data-zone",
    "data-draft-key",
    "data-draft-url",
    "data-same-as",
    "data-ties",
    "data-ask-hallucination",
    "data-ask-unblinding",
    # the nugget assessment: positions of facts and sentences, the mark a button sets, whether a ranking is asked
    "data-ranking",
    "data-index",
    "data-position",
    "data-kind",
    # the steps of a page that asks for more than one thing: the step's name and title (rank, facts, words)
    "data-step",
    "data-step-title",
    "data-span-unit",
}


@pytest.fixture
def blinded_setup(sample_items, tmp_path, make_user, organizer):
    from ranking.services.outputs import outputs_import

    from .conftest import write_jsonl

    for pk, name in zip(SYSTEM_IDS, SYSTEM_NAMES, strict=True):
        System.objects.create(pk=pk, name=name, family="FAMILYMARK", notes="NOTESMARK")
        outputs_import(system_name=name, paths=[write_jsonl(tmp_path / f"{pk}.jsonl", name, sample_items)])
    study = study_create(
        name="Blind study", systems=SYSTEM_NAMES, ask_hallucination=True, ask_harm=True, user=organizer
    ).study
    return study, make_user("ranker")


def _forbidden(text: str, *, reference_word: bool = True) -> list[str]:
    found = [
        marker
        for marker in [*SYSTEM_NAMES, "SYSNAME", "FAMILYMARK", "NOTESMARK", "is_reference", *map(str, SYSTEM_IDS)]
        if marker.lower() in text.lower()
    ]
    if reference_word and re.search(r"\breference\b", text, re.IGNORECASE):
        found.append("reference")
    return found


def test_ranking_page_and_every_ranker_endpoint_are_blind(client, blinded_setup):
    study, ranker = blinded_setup
    client.force_login(ranker)
    bodies = {}
    bodies["home"] = client.get(reverse("ranking_home")).content.decode()
    bodies["start"] = client.get(reverse("ranking_next", args=[study.pk])).content.decode()
    response = client.post(reverse("ranking_next", args=[study.pk]))
    assert response.status_code == 302
    task = RankingTask.objects.get(ranker=ranker)
    assert str(task.pk) in response["Location"]
    bodies["page"] = client.get(response["Location"]).content.decode()
    bodies["api studies"] = client.get("/api/ranking/studies/").content.decode()
    bodies["api next"] = client.post(f"/api/ranking/studies/{study.pk}/next/").content.decode()
    bodies["api task"] = client.get(f"/api/ranking/tasks/{task.pk}/").content.decode()
    draft = {"order": ["B", "A", "C"], "ordered": True, "fields": {"tag_A": "good"}, "elapsed": 5}
    saved = client.post(reverse("ranking_task_draft", args=[task.pk]), draft, content_type="application/json")
    bodies["draft save"] = saved.content.decode()
    bodies["draft"] = client.get(reverse("ranking_task_draft", args=[task.pk])).content.decode()
    bodies["js"] = open(finders.find("ranking/ranking.js")).read()
    submit = {slot: {"rank": i + 1, "tag": "good"} for i, slot in enumerate("ABC")}
    bodies["api submit"] = client.post(
        f"/api/ranking/tasks/{task.pk}/submit/", {"answers": submit}, content_type="application/json"
    ).content.decode()
    for name, body in bodies.items():
        # the script's static help text may say "reference" (the unblinding question); it can hold nothing else
        found = _forbidden(body, reference_word=name != "js")
        assert found == [], f"{name} leaks {found}"
    assert "system" not in bodies["js"].lower().replace("which system wrote", "")
    assert _forbidden(json.dumps(dict(response.headers))) == []
    page = bodies["page"]
    assert set(re.findall(r"\b(data-[a-z-]+)=", page)) <= ALLOWED_DATA_ATTRIBUTES
    answer_ids = set(StudyAnswer.objects.filter(question=task.question).values_list("pk", flat=True))
    ids_in_page = set(re.findall(r'id="([^"]+)"', page))
    assert all(not any(str(a) in i for a in answer_ids) for i in ids_in_page), ids_in_page
    assert "Answer A" in page and "Answer B" in page and "Answer C" in page


def test_api_task_has_only_slots_and_texts_in_the_stored_order(client, blinded_setup):
    study, ranker = blinded_setup
    client.force_login(ranker)
    data = client.post(f"/api/ranking/studies/{study.pk}/next/").json()
    assert set(data) == {
        "task",
        "status",
        "lease_expires_at",
        "study",
        "question",
        "answers",
        "nuggets",
        "identical",
        "ask_unblinding",
    }
    assert all(set(a) == {"slot", "text"} for a in data["answers"])
    assert data["nuggets"] == []  # not a nugget study
    task = RankingTask.objects.get(pk=data["task"])
    texts = [StudyAnswer.objects.get(pk=pk).text for pk in task.order]
    assert [a["text"] for a in data["answers"]] == texts
    assert [a["slot"] for a in data["answers"]] == ["A", "B", "C"]


def test_question_never_shows_the_gold_answer(client, blinded_setup):
    study, ranker = blinded_setup
    client.force_login(ranker)
    for _ in range(len(study.questions.all())):
        data = client.post(f"/api/ranking/studies/{study.pk}/next/").json()
        task = RankingTask.objects.select_related("question__item").get(pk=data["task"])
        item = task.question.item
        question_json = json.dumps(data["question"])
        gold = {
            "short_inverse": item.incorrect_explanation,
            "multi_hop": item.answer,
            "short_answer": item.answer,
            "multi_hop_inverse": " ".join(item.incorrect_reasoning_step),
        }.get(item.qa_type)
        if gold:
            assert json.dumps(gold)[1:-1] not in question_json
        if item.qa_type == "multiple_choice":
            assert "correct_answer" not in question_json and set(data["question"]) == {
                "qa_type",
                "type_label",
                "question",
                "lang",
                "options",
            }
        page = client.get(reverse("ranking_task", args=[task.pk])).content.decode()
        assert "✓" not in page and "correct_answer" not in page
        submit = {a["slot"]: {"rank": i + 1, "tag": "good"} for i, a in enumerate(data["answers"])}
        client.post(f"/api/ranking/tasks/{task.pk}/submit/", {"answers": submit}, content_type="application/json")


def test_rankers_cannot_see_each_others_tasks(client, blinded_setup, make_user):
    study, ranker = blinded_setup
    client.force_login(ranker)
    task_id = client.post(f"/api/ranking/studies/{study.pk}/next/").json()["task"]
    client.force_login(make_user("ranker"))
    assert client.get(f"/api/ranking/tasks/{task_id}/").status_code == 404  # same as a task that does not exist
    assert client.get(reverse("ranking_task", args=[task_id])).status_code == 404
    assert (
        client.post(
            f"/api/ranking/tasks/{task_id}/submit/", {"answers": {}}, content_type="application/json"
        ).status_code
        == 404
    )
    assert client.get(f"/api/studies/{study.pk}/").status_code == 403
    assert client.get(f"/api/studies/{study.pk}/export/").status_code == 403


def test_nugget_study_page_and_api_are_blind_even_for_a_ranker_with_every_other_role(client, blinded_setup, make_user):
    """Every role a ranker may hold with it (an organizer may not: test_organizer_ranker.py)."""
    from annotation.models import QAItem

    from .nuggets import validated_nuggets

    organizer = make_user("organizer")
    for item in QAItem.objects.order_by("pk")[:3]:
        validated_nuggets(item)
    study = study_create(
        name="Blind nugget study", systems=SYSTEM_NAMES, ask_nuggets=True, ask_ranking=False, user=organizer
    ).study
    person = make_user("ranker", "reviewer", "adjudicator")
    client.force_login(person)
    location = client.post(reverse("ranking_next", args=[study.pk]))["Location"]
    task = RankingTask.objects.select_related("question__item").get(ranker=person)
    page = client.get(location).content.decode()
    api = client.get(f"/api/ranking/tasks/{task.pk}/").content.decode()
    for name, body in {"page": page, "api": api}.items():
        assert _forbidden(body) == [], f"{name} leaks {_forbidden(body)}"
    # the facts are the item's nuggets; the gold answer appears only as one of the lettered answers
    data = json.loads(api)
    assert [n["id"] for n in data["nuggets"]] == ["n1", "n2", "n3"]
    assert all(set(a) == {"slot", "text", "sentences"} for a in data["answers"])
    assert "Must NOT say:" in page and "Metformin is the first-line drug" in page
    assert set(re.findall(r"\b(data-[a-z-]+)=", page)) <= ALLOWED_DATA_ATTRIBUTES
    assert _forbidden(open(finders.find("ranking/nuggets.js")).read()) == []
