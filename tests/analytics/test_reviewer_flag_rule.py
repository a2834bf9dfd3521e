"""Usability F24: the pages that show whether a reviewer is flagged state the rule that decided it, with the values
of the vetting settings (not a copy of them): the reviewer-quality report (as it stood when computed) and the
vetting dashboard's people table."""

from __future__ import annotations

from pathlib import Path

import pytest

from analytics.services.requests import report_request
from annotation.models import QAItem, VettingConfig
from annotation.services.imports import items_import
from tests.reviews import done_review

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def reviewed(make_user):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    done_review(QAItem.objects.order_by("id").first(), make_user("reviewer"), "primary", "correct", 5)


def _settings(accuracy, answers):
    config = VettingConfig.load()
    config.gold_min_accuracy, config.gold_min_answers = accuracy, answers
    config.save()


def test_report_states_the_rule_it_was_computed_with(reviewed, organizer, organizer_client):
    _settings(0.7, 4)
    report = report_request(kind="reviewer_quality", user=organizer)
    _settings(0.9, 9)  # a later change of the settings does not rewrite what the report used
    page = organizer_client.get(f"/analytics/reports/{report.pk}/").content.decode()
    assert "flagged when fewer than 70% of their gold answers are right, once they have given at least 4" in page
    printable = organizer_client.get(f"/analytics/reports/{report.pk}/print/").content.decode()
    assert "at least 4 gold answers" in printable


def test_vetting_dashboard_states_the_rule_under_the_people_table(reviewed, organizer_client):
    _settings(0.75, 6)
    page = organizer_client.get("/organize/vetting/").content.decode()
    rule = page[page.index('id="gold-flag-rule"') :]
    assert "fewer than 75% of their gold answers are right, once they have given at least 6" in rule
