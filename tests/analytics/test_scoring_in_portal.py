"""Task-1 scoring inside the portal: imported outputs scored by a job give the public scorer's numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analytics.leaderboards import task1_table
from analytics.models import AnswerScore
from analytics.services.requests import scoring_request
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
                assert getattr(score, field) == pytest.approx(want[field], abs=1e-4), (
                    score.qa_type,
                    score.index,
                    field,
                )
        for field in ("correct", "precision", "recall", "f1"):
            if field in want:
                assert getattr(score, field) == pytest.approx(want[field]), (score.qa_type, score.index, field)
    assert checked == len(expected)
    assert run.run_record["profile"] == "cliniqlink-2025" and "seed" in run.run_record
    summary = json.loads((REFERENCE / "expected_summary.json").read_text()).get(submission, {})
    for key, value in summary.items():
        assert run.summary[key] == pytest.approx(value), key
    table = task1_table()
    assert table[0]["system"] == submission and table[0]["overall"] == pytest.approx(
        run.summary["overall_effectiveness"]
    )


def test_rerunning_the_same_scoring_rewrites_rows_without_duplicates(organizer):
    from analytics.scoring.runs import scoring_run_execute

    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    outputs_import(system_name="sys", paths=[REFERENCE / "open_a_self"])
    run = scoring_request(system=System.objects.get(name="sys"), user=organizer)
    run.refresh_from_db()
    first = dict(AnswerScore.objects.filter(run=run).values_list("item_id", "semantic"))
    scoring_run_execute(run=run)
    assert AnswerScore.objects.filter(run=run).count() == 35
    assert dict(AnswerScore.objects.filter(run=run).values_list("item_id", "semantic")) == first


def _promptcblue_outputs(tmp_path: Path, system: str, responses: dict[str, str]) -> Path:
    path = tmp_path / f"{system}.jsonl"
    lines = [
        json.dumps({"item_uid": uid, "system": system, "response": text}, ensure_ascii=False)
        for uid, text in responses.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_promptcblue_answers_get_rouge_and_bleu_by_characters(organizer, tmp_path):
    """Known answer: target 发热，咳嗽，咽痛 (6 characters without punctuation), response 发热咳嗽 (4, all matching in
    order): ROUGE-1 F = ROUGE-L F = 2·1·(4/6)/(1+4/6) = 0.8; BLEU-4 = all n-gram precisions 1 × brevity penalty
    exp(1 − 6/4) = 0.60653. METEOR is not defined for Chinese: null, with the reason in the run's notes."""
    import math

    items_import(paths=[ROOT / "fixtures" / "promptcblue-sample.jsonl"], fmt="promptcblue")
    path = _promptcblue_outputs(tmp_path, "zh-sys", {"pcb-train-demo-0001": "发热咳嗽", "pcb-train-demo-0002": "不同"})
    outputs_import(system_name="zh-sys", paths=[path])
    run = scoring_request(system=System.objects.get(name="zh-sys"), user=organizer)
    run.refresh_from_db()
    assert Job.objects.get(pk=run.job_id).status == "succeeded"
    by_uid = {s.item.uid: s for s in AnswerScore.objects.filter(run=run).select_related("item")}
    assert set(by_uid) == {"pcb-train-demo-0001", "pcb-train-demo-0002"}
    first = by_uid["pcb-train-demo-0001"]
    assert first.qa_type == "generic" and first.semantic is None and first.meteor is None
    assert first.rouge == pytest.approx(0.8)
    assert first.bleu == pytest.approx(math.exp(-0.5))
    second = by_uid["pcb-train-demo-0002"]  # target 相同, answer 不同: one character of two in common
    assert second.rouge == pytest.approx(0.5)
    assert run.summary["other_benchmarks_answers"] == 2 and run.summary["other_benchmarks_chinese_answers"] == 2
    assert run.summary["other_benchmarks_rouge"] == pytest.approx((0.8 + 0.5) / 2)
    assert run.summary["other_benchmarks_meteor"] is None
    assert any("not computed for Chinese" in note for note in run.run_record["notes"])
    assert "overall_effectiveness" not in run.summary  # no ClinIQLink items answered: no ClinIQLink summary


def test_a_system_answering_both_benchmarks_gets_both_kinds_of_score(organizer, tmp_path):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    items_import(paths=[ROOT / "fixtures" / "promptcblue-sample.jsonl"], fmt="promptcblue")
    outputs_import(system_name="open_a_self", paths=[REFERENCE / "open_a_self"])
    path = _promptcblue_outputs(
        tmp_path, "open_a_self", {"pcb-train-demo-0003": "一般建议空腹血糖控制在4.4～7.0 mmol/L。"}
    )
    outputs_import(system_name="open_a_self", paths=[path])
    run = scoring_request(system=System.objects.get(name="open_a_self"), user=organizer)
    run.refresh_from_db()
    assert AnswerScore.objects.filter(run=run).exclude(qa_type="generic").count() == 35
    verbatim = AnswerScore.objects.get(run=run, qa_type="generic")
    assert verbatim.rouge == pytest.approx(1.0) and verbatim.bleu == pytest.approx(1.0)
    assert "overall_effectiveness" in run.summary and run.summary["other_benchmarks_answers"] == 1
    from django.test import Client

    client = Client()
    client.force_login(organizer)
    page = client.get("/analytics/task1/").content.decode()
    assert "Other benchmarks ROUGE" in page
    csv_text = client.get("/analytics/task1/?format=csv").content.decode()
    header, row = csv_text.splitlines()[:2]
    assert "other_rouge" in header.split(",") and row.startswith("open_a_self,")


def test_a_release_run_scores_promptcblue_answers_against_the_frozen_target(organizer, tmp_path):
    from annotation.models import QAItem
    from annotation.services.releases import release_freeze

    items_import(paths=[ROOT / "fixtures" / "promptcblue-sample.jsonl"], fmt="promptcblue")
    release = release_freeze(name="zh", rule={"statuses": [], "final_verdict": None, "min_relevance": None})
    # The live item changes after the freeze; the release run must still use the frozen target.
    QAItem.objects.filter(uid="pcb-train-demo-0001").update(answer="完全不同的答案")
    path = _promptcblue_outputs(tmp_path, "zh-sys", {"pcb-train-demo-0001": "发热咳嗽"})
    outputs_import(system_name="zh-sys", paths=[path])
    run = scoring_request(system=System.objects.get(name="zh-sys"), release=release, user=organizer)
    run.refresh_from_db()
    score = AnswerScore.objects.get(run=run)
    assert score.qa_type == "generic" and score.rouge == pytest.approx(0.8)  # against 发热，咳嗽，咽痛


def test_a_scoring_job_with_a_hostile_step_number_succeeds_and_drops_that_answer(organizer, tmp_path):
    """An answer naming step 12345678901 used to fail the job on every retry (OverflowError after a 40 s stall)
    and would not fit the integer column either; the public scorer drops such an item from the type's scores."""
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    folder = tmp_path / "hostile"
    folder.mkdir()
    for path in (REFERENCE / "open_step_d0_exact").iterdir():
        data = json.loads(path.read_text())
        if path.name == "multi_hop_inverse.json":
            data["responses"][0] = data["responses"][0].replace("Step 3", "Step 12345678901", 1)
        (folder / path.name).write_text(json.dumps(data))
    outputs_import(system_name="hostile", paths=[folder])
    run = scoring_request(system=System.objects.get(name="hostile"), user=organizer)
    run.refresh_from_db()
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "succeeded", job.error
    dropped = AnswerScore.objects.get(run=run, qa_type="multi_hop_inverse", index=0)
    assert dropped.semantic is None and dropped.predicted_step is None and dropped.step_distance is None
    assert run.summary["multi_hop_inverse_semantic_match_score"] == pytest.approx(1.0, abs=1e-4)
    assert run.summary["multi_hop_inverse_step_identification_rate"] == 1.0
    assert any(n.startswith("multi_hop_inverse: item 1 dropped") for n in run.run_record["notes"])
