"""Task-1 scoring inside the portal: imported outputs scored by a job give the public scorer's numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analytics.leaderboards import task1_table
from analytics.models import AnswerScore
from analytics.services import scoring_request
from annotation.services.imports import items_import
from portal.models import Job
from ranking.models import System
from ranking.services.outputs import outputs_import

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "fixtures" / "metric-reference"
PORTAL_TYPE = {"short": "short_answer"}

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _expected(submission: str) -> dict[tuple[str, int], dict]:
    rows = [json.loads(line) for line in (REFERENCE / "expected.jsonl").read_text().splitlines() if line.strip()]
    return {(r["qa_type"], r["index"]): r for r in rows if r["submission"] == submission}


@pytest.mark.parametrize("submission", ["open_c_wrong", "closed_list_one_extra_option"])
def test_portal_scores_match_the_public_scorer(organizer, submission):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    outputs_import(system_name=submission, paths=[REFERENCE / submission])
    run = scoring_request(system=System.objects.get(name=submission), user=organizer)
    run.refresh_from_db()
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "succeeded", job.error
    assert job.progress_done == job.progress_total > 0
    expected = _expected(submission)
    scores = list(AnswerScore.objects.filter(run=run))
    assert len(scores) == 35 and len(expected) >= 5
    checked = 0
    for score in scores:
        metric_type = {v: k for k, v in PORTAL_TYPE.items()}.get(score.qa_type, score.qa_type)
        want = expected.get((metric_type, score.index))
        if want is None:
            continue  # the reference file lists only the types this submission varies
        checked += 1
        for field in ("semantic", "word", "sentence", "paragraph"):
            if field in want:
                assert getattr(score, field) == pytest.approx(want[field], abs=1e-4), (score.qa_type, score.index, field)
        for field in ("correct", "precision", "recall", "f1"):
            if field in want:
                assert getattr(score, field) == pytest.approx(want[field]), (score.qa_type, score.index, field)
    assert checked == len(expected)
    assert run.run_record["profile"] == "cliniqlink-2025" and "seed" in run.run_record
    summary = json.loads((REFERENCE / "expected_summary.json").read_text()).get(submission, {})
    for key, value in summary.items():
        assert run.summary[key] == pytest.approx(value), key
    table = task1_table()
    assert table[0]["system"] == submission and table[0]["overall"] == pytest.approx(run.summary["overall_effectiveness"])


def test_rerunning_the_same_scoring_rewrites_rows_without_duplicates(organizer):
    from analytics.scoring import scoring_run_execute

    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    outputs_import(system_name="sys", paths=[REFERENCE / "open_a_self"])
    run = scoring_request(system=System.objects.get(name="sys"), user=organizer)
    run.refresh_from_db()
    first = dict(AnswerScore.objects.filter(run=run).values_list("item_id", "semantic"))
    scoring_run_execute(run=run)
    assert AnswerScore.objects.filter(run=run).count() == 35
    assert dict(AnswerScore.objects.filter(run=run).values_list("item_id", "semantic")) == first
