"""The freeze rule's parameters are validated once, by the rule's own class, at every door (releases page,
API, ``freeze_release --rule``): a wrong type, an unknown key or an out-of-range value is refused naming the
field, and nothing is frozen."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import QAItem, Release
from annotation.services.imports import items_import
from annotation.services.release_rules import RuleError, SelectionRule
from annotation.services.releases import release_freeze

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db

BAD_RULES = [
    ({"min_relevance": "high"}, "min_relevance"),
    ({"min_relevance": True}, "min_relevance"),  # a bool is an int in Python: must not mean "1"
    ({"min_relevance": 7}, "min_relevance"),
    ({"min_relevance": 0.5}, "min_relevance"),
    ({"statuses": "verified"}, "statuses"),  # a string is iterable: must not mean ["v", "e", ...]
    ({"statuses": ["verifed"]}, "statuses"),
    ({"qa_types": 5}, "qa_types"),
    ({"qa_types": ["true_false", 3]}, "qa_types"),
    ({"qa_types": ["tf"]}, "qa_types"),
    ({"exclude_open_issues": "no"}, "exclude_open_issues"),  # a non-empty string is truthy
    ({"exclude_open_issues": 0}, "exclude_open_issues"),
    ({"final_verdict": 1}, "final_verdict"),
    ({"final_verdict": "right"}, "final_verdict"),
    ({"benchmark": ["cliniqlink"]}, "benchmark"),
    ({"min_relevence": 4}, "min_relevence"),
    ([["min_relevance", 4]], "rule"),
]


@pytest.fixture
def frozen_ready():
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary")


@pytest.mark.parametrize(("rule", "field"), BAD_RULES)
def test_the_rule_class_refuses_a_bad_parameter_naming_the_field(frozen_ready, rule, field):
    with pytest.raises(RuleError, match=f"field '{field}'") as caught:
        release_freeze(name="bad", rule=rule)
    assert caught.value.field == field
    assert Release.objects.count() == 0


def test_good_values_are_normalised_and_stored():
    rule = SelectionRule.from_dict({"min_relevance": 4, "statuses": [], "final_verdict": None, "qa_types": ["list"]})
    assert rule.as_dict() == {
        "statuses": [],
        "final_verdict": None,
        "min_relevance": 4.0,
        "exclude_open_issues": True,
        "qa_types": ["list"],
        "benchmark": None,
    }
    assert isinstance(rule.as_dict()["min_relevance"], float)


@pytest.mark.parametrize(("rule", "field"), [(r, f) for r, f in BAD_RULES if isinstance(r, dict)])
def test_api_answers_400_naming_the_field(frozen_ready, organizer_client, rule, field):
    response = organizer_client.post("/api/releases/", {"name": "api", "rule": rule}, content_type="application/json")
    assert response.status_code == 400
    assert field in response.json()["rule"]
    assert Release.objects.count() == 0


@pytest.mark.parametrize(
    ("rule", "field"),
    [
        ('{"exclude_open_issues": "no"}', "exclude_open_issues"),
        ('{"qa_types": 5}', "qa_types"),
        ("5", "rule"),
        # read by the one loader of people's JSON: an infinite number or a key given twice is refused
        ('{"min_relevance": 1e400}', "min_relevance"),
        ('{"min_relevance": 4, "min_relevance": 5}', "min_relevance"),
    ],
)
def test_command_refuses_naming_the_field(frozen_ready, rule, field):
    with pytest.raises(CommandError, match=f"field '{field}'"):
        call_command("freeze_release", "cmd", "--rule", rule)
    assert Release.objects.count() == 0


def test_page_refuses_an_out_of_range_value_on_its_field(frozen_ready, organizer_client):
    response = organizer_client.post(
        "/releases/", {"name": "web", "min_relevance": "9", "final_verdict": "correct", "exclude_open_issues": "on"}
    )
    assert response.status_code == 400
    assert "min_relevance" in response.context["form"].errors
    assert Release.objects.count() == 0


def test_release_page_states_the_rule_in_words(frozen_ready, organizer_client):
    release = release_freeze(name="words", rule={"min_relevance": 4, "qa_types": ["list", "true_false"]})
    page = organizer_client.get(f"/releases/{release.label}/").content.decode()
    assert (
        "status verified; final verdict correct; final GP relevance at least 4; items with open feedback or "
        "disputes held out; QA types List, True / false" in page
    )
    assert "min_relevance" not in page and "{&#x27;" not in page
