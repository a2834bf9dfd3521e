"""Study set-up: eligible items only, sampling, options checked, frozen answer texts, reference included."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import QAItem
from portal.errors import DomainError
from ranking.models import Study, StudyAnswer, StudyQuestion, System, SystemOutput
from ranking.services.outputs import outputs_import
from ranking.services.reference import reference_text
from ranking.services.studies import study_create, study_state_set

from .conftest import SYSTEM_NAMES, write_jsonl

pytestmark = pytest.mark.django_db


def test_only_items_with_every_output_enter_and_the_rest_are_counted(systems_with_outputs, sample_items, tmp_path):
    outputs_import(
        system_name="SYSNAME-GAMMA-70B",
        paths=[write_jsonl(tmp_path / "g.jsonl", "SYSNAME-GAMMA-70B", sample_items[:10])],
    )
    result = study_create(name="three systems", systems=[*SYSTEM_NAMES, "SYSNAME-GAMMA-70B"])
    assert (result.included, result.excluded) == (10, 25)
    assert result.study.excluded_items == 25
    question = result.study.questions.first()
    assert question.answers.count() == 4  # three systems + the reference
    reference = question.answers.get(system__is_reference=True)
    assert reference.text == reference_text(question.item)


def test_filter_by_type_and_seeded_sample(make_study):
    study = make_study(qa_types=["short_answer", "multi_hop"], sample_size=4, seed=5)
    items = list(study.questions.values_list("item__qa_type", flat=True))
    assert len(items) == 4 and set(items) <= {"short_answer", "multi_hop"}
    again = make_study(qa_types=["short_answer", "multi_hop"], sample_size=4, seed=5)
    assert list(study.questions.values_list("item_id", flat=True)) == list(
        again.questions.values_list("item_id", flat=True)
    )
    assert study.item_filter == {"qa_types": ["short_answer", "multi_hop"], "sample_size": 4, "seed": 5}


def test_defaults(make_study):
    study = make_study()
    assert study.include_reference and study.overlap == 3 and not study.ties_allowed
    assert study.tag_scale == ["good", "okay", "bad"] and study.is_open and study.release_id is None
    assert StudyAnswer.objects.filter(question__study=study).count() == 35 * 3


def test_answer_texts_are_frozen_and_think_blocks_removed(make_study, sample_items, tmp_path):
    item = sample_items[0]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"item_uid": item.uid, "response": "<think>SYSNAME hint</think> The answer."}) + "\n")
    outputs_import(system_name=SYSTEM_NAMES[0], paths=[path])
    study = make_study()
    answer = StudyAnswer.objects.get(question__study=study, question__item=item, system__name=SYSTEM_NAMES[0])
    assert answer.text == "The answer."
    SystemOutput.objects.filter(pk=answer.output_id).update(response="changed later")
    answer.refresh_from_db()
    assert answer.text == "The answer."


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"systems": ["nope"]}, "unknown system"),
        ({"systems": []}, "at least one system"),
        ({"overlap": 0}, "from 1 to 500"),
        ({"overlap": 40000}, "from 1 to 500"),
        ({"tag_scale": ["good"]}, "at least two"),
        ({"unblinding_rate": 0.5, "include_reference": False}, "needs the reference"),
        ({"qa_types": ["essay"]}, "unknown QA type"),
        ({"systems": [SYSTEM_NAMES[0]], "include_reference": False}, "at least two answers"),
    ],
)
def test_bad_options_are_refused(systems_with_outputs, options, message):
    with pytest.raises(DomainError, match=message):
        study_create(**{"name": "s", "systems": SYSTEM_NAMES, **options})
    assert not Study.objects.exists()


def test_reference_cannot_be_chosen_as_a_system(make_study):
    make_study()
    with pytest.raises(DomainError, match="include_reference"):
        study_create(name="x", systems=["reference"])


def test_state_is_audited(make_study, organizer):
    study = make_study()
    study_state_set(study=study, state="closed", user=organizer)
    study.refresh_from_db()
    assert study.state == "closed"


def test_create_study_command(systems_with_outputs, capsys):
    call_command(
        "create_study",
        "cmd study",
        "--system",
        SYSTEM_NAMES[0],
        "--system",
        SYSTEM_NAMES[1],
        "--sample-size",
        "5",
        "--overlap",
        "2",
        "--hallucination",
    )
    assert "5 question(s); 0 item(s) left out" in capsys.readouterr().out
    study = Study.objects.get(name="cmd study")
    assert study.overlap == 2 and study.ask_hallucination and StudyQuestion.objects.filter(study=study).count() == 5
    assert System.objects.get(name="reference").is_reference
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_study", "cmd study", "--system", SYSTEM_NAMES[0])
    assert QAItem.objects.count() == 35


def test_study_from_a_frozen_release_uses_only_its_items(make_study, sample_items):
    from annotation.models import QAItem
    from annotation.services.releases import release_freeze

    chosen = sample_items[:4]
    QAItem.objects.filter(pk__in=[i.pk for i in chosen]).update(
        status="verified", final_verdict="correct", final_relevance=5.0
    )
    release = release_freeze(name="for-study")
    study = make_study(release_id=release.pk)
    assert set(study.questions.values_list("item_id", flat=True)) == {i.pk for i in chosen}
