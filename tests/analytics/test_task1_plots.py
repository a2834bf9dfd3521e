"""Task-1 score distributions: one group per system within each QA type, from each system's latest run."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.utils import timezone

from analytics.leaderboards import score_distributions
from analytics.models import AnswerScore, ScoringRun
from annotation.models import QAItem
from annotation.services.imports import items_import
from ranking.models import System

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


def _run(system: System, scores: dict[int, float]) -> ScoringRun:
    run = ScoringRun.objects.create(system=system, finished_at=timezone.now())
    items = {item.pk: item for item in QAItem.objects.filter(pk__in=scores)}
    for index, (pk, value) in enumerate(scores.items()):
        AnswerScore.objects.create(run=run, item=items[pk], qa_type=items[pk].qa_type, index=index, semantic=value)
    return run


def test_score_distributions_keep_systems_apart(organizer_client):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    short = list(QAItem.objects.filter(qa_type="short_answer").values_list("pk", flat=True)[:3])
    multi = list(QAItem.objects.filter(qa_type="multi_hop").values_list("pk", flat=True)[:2])
    good, weak = System.objects.create(name="GOOD"), System.objects.create(name="WEAK")
    _run(good, {short[0]: 0.1})  # superseded by GOOD's later run
    _run(good, {short[0]: 0.9, short[1]: 0.8, short[2]: 0.7, multi[0]: 0.6})
    _run(weak, {short[0]: 0.2, multi[0]: 0.3, multi[1]: 0.1})

    data = score_distributions(metric="semantic")
    assert {qa: {s: sorted(v) for s, v in by.items()} for qa, by in data.items()} == {
        "short_answer": {"GOOD": [0.7, 0.8, 0.9], "WEAK": [0.2]},
        "multi_hop": {"GOOD": [0.6], "WEAK": [0.1, 0.3]},
    }
    page = organizer_client.get("/analytics/task1/").content.decode()
    assert 'class="plot"' in page and "/analytics/task1/plots/semantic.svg" in page
    svg = organizer_client.get("/analytics/task1/plots/semantic.svg")
    assert svg.status_code == 200 and b"viewBox" in svg.content


def test_the_leaderboard_opens_on_the_newest_scored_release(organizer_client):
    from annotation.services.releases import release_freeze

    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5, final_source="primary")
    release = release_freeze(
        name="spring", rule={"statuses": ["verified"], "final_verdict": None, "min_relevance": None}
    )
    system = System.objects.create(name="ON-RELEASE")
    ScoringRun.objects.create(system=system, release=release, finished_at=timezone.now(), summary={"overall": 0.5})
    page = organizer_client.get("/analytics/task1/").content.decode()
    assert "ON-RELEASE" in page and f'<option value="{release.pk}" selected' in page
    # choosing "all answered items" stays there
    page = organizer_client.get("/analytics/task1/?release=").content.decode()
    assert "ON-RELEASE" not in page
