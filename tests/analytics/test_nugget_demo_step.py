"""The demo's nugget step: the matcher labels the nugget study and the shipped lenient judge's lines for it are
imported; a second run changes nothing."""

from __future__ import annotations

import pytest

from analytics.models import JudgeNuggetLabel
from demo import activity as demo
from tests.analytics.nugget_rows import nugget_study
from tests.analytics.test_nugget_matcher_job import fake_encode

pytestmark = pytest.mark.django_db

ITEM = "cl-05844d17fc53e15b428b"  # an item of fixtures/nuggets/demo-judge-labels.jsonl


def test_demo_step_runs_matcher_and_imports_the_lenient_judge(make_user, monkeypatch, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    monkeypatch.setattr("analytics.nuggets.matching.sentence_encoder", lambda encoder: fake_encode)
    monkeypatch.setattr("analytics.nuggets.matching.settings_encoder", lambda: None)
    nugget_study(items={ITEM: {"Demo model A": "An answer.", "Demo model B": "Another answer."}})
    users = {"organizer@demo.portal": make_user("organizer")}
    line = demo._nugget_judges(users)
    assert "the matcher labelled 2 answers" in line and "lenient judge imported" in line
    assert JudgeNuggetLabel.objects.filter(labeller="matcher").count() == 6
    judged = JudgeNuggetLabel.objects.filter(labeller="lenient-llm")
    assert judged.exists() and {row.source for row in judged} == {"import"}
    assert demo._nugget_judges(users) == ""


def test_demo_step_is_skipped_without_a_nugget_study(make_user):
    assert demo._nugget_judges({"organizer@demo.portal": make_user("organizer")}) == ""
