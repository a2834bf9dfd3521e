"""PromptCBLUE scored inside the portal: a release's PromptCBLUE items, a system's imported outputs, a scoring job,
and the leaderboard, sample pages and downloads that read it. Known answers: the official evaluation's own
report on the same files (fixtures/promptcblue-reference, recorded once from the official scripts)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone

from analytics.models import PromptCblueScore, ScoringRun
from analytics.selectors import PROMPTCBLUE_METRIC
from analytics.services.requests import scoring_request
from annotation.models import QAItem
from annotation.services.imports import items_import
from annotation.services.releases import release_freeze
from evaluation.promptcblue import score_files
from portal.models import Job
from ranking.models import System
from ranking.services.outputs import outputs_import

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "fixtures" / "promptcblue-reference"
ALL_ITEMS = {"statuses": [], "final_verdict": None, "min_relevance": None}

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _score(system: str, organizer, release=None) -> ScoringRun:
    run = scoring_request(
        system=System.objects.get(name=system), release=release, profile=ScoringRun.PROMPTCBLUE, user=organizer
    )
    run.refresh_from_db()
    return run


def _toy_release(name: str = "toy"):
    items_import(paths=[CASES / "toy" / "gold.jsonl"], fmt="promptcblue")
    return release_freeze(name=name, rule=ALL_ITEMS)


def test_a_release_run_gives_the_official_report_and_keeps_every_sample(organizer):
    release = _toy_release()
    outputs_import(system_name="toy-system", paths=[CASES / "toy" / "predictions.jsonl"])
    run = _score("toy-system", organizer, release)
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "succeeded", job.error
    assert job.progress_done == job.progress_total > 0
    official = json.loads((CASES / "toy" / "official.json").read_text())
    assert run.summary["score"] == pytest.approx(official["score"], abs=1e-6)
    for key, value in official["scoreJson"].items():
        assert run.summary["scoreJson"][key] == pytest.approx(value, abs=1e-6), key
    gold = _lines(CASES / "toy" / "gold.jsonl")
    assert run.n_items == len(gold) == PromptCblueScore.objects.filter(run=run).count()
    record = run.run_record
    assert record["official_overall"] is True and record["unanswered"] == 0
    assert sum(task["n"] for task in record["tasks"].values()) == len(gold)
    low, high = record["overall_ci"]
    assert low <= run.summary["score"] / 100 <= high and high - low > 0
    for name, task in record["tasks"].items():
        if task["n"] > 1 and task["ci"] is not None:
            assert task["ci"][0] <= task["figure"] <= task["ci"][1], name
    # the parsed structures and misses stored per sample are the scorer's own
    expected = score_files(CASES / "toy" / "gold.jsonl", CASES / "toy" / "predictions.jsonl", keep_samples=True)
    by_id = {s.sample_id: s for s in expected.scores.samples}
    for stored in PromptCblueScore.objects.filter(run=run):
        want = by_id[stored.sample_id]
        assert stored.task == want.task
        assert stored.parse_misses == list(want.parse_misses)
        assert json.loads(json.dumps(want.prediction, ensure_ascii=False)) == stored.prediction


def test_an_item_without_an_answer_scores_as_an_empty_answer(organizer, tmp_path):
    release = _toy_release()
    predictions = _lines(CASES / "toy" / "predictions.jsonl")
    kept = [p for i, p in enumerate(predictions) if i % 3]
    outputs_import(system_name="skipper", paths=[_write(tmp_path / "some.jsonl", kept)])
    run = _score("skipper", organizer, release)
    assert run.run_record["unanswered"] == len(predictions) - len(kept) > 0
    # independent: the official files with "" where the system gave nothing
    kept_ids = {p["sample_id"] for p in kept}
    filled = [p if p["sample_id"] in kept_ids else {**p, "target": ""} for p in predictions]
    want = score_files(CASES / "toy" / "gold.jsonl", _write(tmp_path / "filled.jsonl", filled)).report
    assert run.summary["score"] == pytest.approx(want["score"], abs=1e-9)
    unanswered = PromptCblueScore.objects.filter(run=run, answered=False)
    assert unanswered.count() == run.run_record["unanswered"] and all(s.output_id is None for s in unanswered)


def test_a_release_lacking_tasks_scores_the_tasks_present_and_says_it_is_not_the_official_overall(organizer, tmp_path):
    gold = [g for g in _lines(CASES / "toy" / "gold.jsonl") if g["task_dataset"] in {"CMeEE-V2", "CHIP-CTC"}]
    items_import(paths=[_write(tmp_path / "part.jsonl", gold)], fmt="promptcblue")
    release = release_freeze(name="part", rule=ALL_ITEMS)
    ids = {g["sample_id"] for g in gold}
    predictions = [p for p in _lines(CASES / "toy" / "predictions.jsonl") if p["sample_id"] in ids]
    outputs_import(system_name="part-system", paths=[_write(tmp_path / "pred.jsonl", predictions)])
    run = _score("part-system", organizer, release)
    assert Job.objects.get(pk=run.job_id).status == "succeeded"
    assert run.run_record["official_overall"] is False
    assert run.summary["comparable_to_official"] is False
    assert set(run.run_record["tasks"]) == {"CMeEE-V2", "CHIP-CTC"}
    figures = [run.run_record["tasks"][name]["figure"] for name in ("CMeEE-V2", "CHIP-CTC")]
    assert run.summary["score"] == pytest.approx(sum(figures) / 2 * 100)
    client = Client()
    client.force_login(organizer)
    page = client.get(f"/analytics/promptcblue/?release={release.pk}").content.decode()
    assert "not comparable to the official overall" in page
    assert "CMedCausal" not in page.split("Parse misses")[0]  # tasks absent from the release are not rows


def test_a_system_without_promptcblue_outputs_fails_with_a_sentence_and_items_without_a_task_are_left_out(
    organizer, tmp_path
):
    items_import(paths=[ROOT / "fixtures" / "promptcblue-sample.jsonl"], fmt="promptcblue")  # one "demo-qa"
    items_import(paths=[CASES / "toy" / "gold.jsonl"], fmt="promptcblue")
    System.objects.create(name="silent")
    run = _score("silent", organizer)
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "failed" and "no outputs for the PromptCBLUE items" in job.error
    assert not PromptCblueScore.objects.filter(run=run).exists() and run.finished_at is None
    release = release_freeze(name="mixed", rule=ALL_ITEMS)
    outputs_import(system_name="toy-system", paths=[CASES / "toy" / "predictions.jsonl"])
    run = _score("toy-system", organizer, release)
    assert run.run_record["left_out"] == {"demo-qa": 1}
    # the sample file's two items of real tasks are in the release but were not answered
    assert run.run_record["unanswered"] == 2 and run.n_items == len(_lines(CASES / "toy" / "gold.jsonl")) + 2


def test_a_run_scored_twice_keeps_one_row_per_sample(organizer):
    from analytics.scoring.promptcblue import promptcblue_run_execute

    release = _toy_release()
    outputs_import(system_name="toy-system", paths=[CASES / "toy" / "predictions.jsonl"])
    run = _score("toy-system", organizer, release)
    first = dict(PromptCblueScore.objects.filter(run=run).values_list("sample_id", "score"))
    promptcblue_run_execute(run=run)  # a redelivered task
    assert dict(PromptCblueScore.objects.filter(run=run).values_list("sample_id", "score")) == first


# --- pages and downloads -----------------------------------------------------------------------------------------


@pytest.fixture
def two_systems(organizer, tmp_path):
    """The toy release scored for the recorded predictions and for a system whose answers carry a hostile name
    and markup, and that writes every CMeEE-V2 answer in a format the parser does not read."""
    release = _toy_release()
    outputs_import(system_name="toy-system", paths=[CASES / "toy" / "predictions.jsonl"])
    hostile = '=HYPERLINK("x")<b>'
    own_format = [
        {**g, "target": g["target"].replace("实体：", " = ") + "\n<script>alert(1)</script>"}
        if g["task_dataset"] == "CMeEE-V2"
        else g
        for g in _lines(CASES / "toy" / "gold.jsonl")
    ]
    outputs_import(system_name=hostile, paths=[_write(tmp_path / "own.jsonl", own_format)])
    runs = [_score(name, organizer, release) for name in ("toy-system", hostile)]
    assert all(run.finished_at for run in runs)
    client = Client()
    client.force_login(organizer)
    return release, runs, hostile, client


def test_the_leaderboard_shows_every_task_with_n_intervals_and_parse_misses(two_systems):
    release, runs, hostile, client = two_systems
    response = client.get("/analytics/promptcblue/")  # opens on the newest release with a PromptCBLUE run
    assert response.status_code == 200
    page = response.content.decode()
    assert "CMeEE-V2 医学实体识别" in page and "Text2DT 诊疗决策树抽取" in page
    assert "official overall: the mean of the 18 tasks" in page
    assert hostile not in page and "&lt;b&gt;" in page  # escaped
    n_cmee = runs[0].run_record["tasks"]["CMeEE-V2"]["n"]
    assert f"n = {n_cmee}" in page
    misses = runs[1].run_record["tasks"]["CMeEE-V2"]["parse_misses"]
    assert misses > 0 and f"/analytics/promptcblue/runs/{runs[1].pk}/?task=CMeEE-V2&misses=1" in page
    for word in ("{'", "None", "nan"):
        assert word not in page.split("<main")[-1], word


def test_the_leaderboard_downloads_are_complete_and_spreadsheet_safe(two_systems):
    release, runs, hostile, client = two_systems
    body = client.get(f"/analytics/promptcblue/?release={release.pk}&format=csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert {row["system"] for row in rows} == {"toy-system", "'" + hostile}  # a formula is never a formula
    overall = next(r for r in rows if r["system"] == "toy-system" and r["task"] == "overall")
    assert float(overall["score"]) == pytest.approx(runs[0].summary["score"])
    assert float(overall["ci_low"]) <= float(overall["score"]) <= float(overall["ci_high"])
    assert len([r for r in rows if r["system"] == "toy-system"]) == 1 + len(runs[0].run_record["tasks"])
    data = json.loads(client.get(f"/analytics/promptcblue/?release={release.pk}&format=json").content)
    first = next(s for s in data["systems"] if s["system"] == "toy-system")
    assert first["report"]["scoreJson"]["CMeEE-V2-Micro-F1"] == pytest.approx(
        runs[0].summary["scoreJson"]["CMeEE-V2-Micro-F1"]
    )
    assert first["tasks"]["CMeEE-V2"]["n"] == runs[0].run_record["tasks"]["CMeEE-V2"]["n"]
    for name in ("overall", f"run-{runs[0].pk}"):
        for fmt, kind in (("svg", "image/svg+xml"), ("png", "image/png")):
            plot = client.get(f"/analytics/promptcblue/plots/{name}.{fmt}?release={release.pk}")
            assert plot.status_code == 200 and plot["Content-Type"] == kind


def test_a_runs_samples_filter_to_parse_misses_and_a_sample_shows_both_structures(two_systems):
    release, runs, hostile, client = two_systems
    run = runs[1]
    page = client.get(f"/analytics/promptcblue/runs/{run.pk}/?task=CMeEE-V2&misses=1").content.decode()
    with_misses = PromptCblueScore.objects.filter(run=run, task="CMeEE-V2", n_parse_misses__gt=0)
    assert with_misses.exists()
    for sample in with_misses:
        assert sample.sample_id in page
    others = PromptCblueScore.objects.filter(run=run).exclude(task="CMeEE-V2")
    assert not any(f">{s.sample_id}<" in page for s in others)
    sample = with_misses.first()
    page = client.get(f"/analytics/promptcblue/runs/{run.pk}/samples/{sample.pk}/").content.decode()
    assert "Parse misses" in page and "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;" in page
    assert "As the official parser reads them" in page and "missed" in page  # gold instances it did not match
    assert "toy-system" in page  # the same sample in the other system's run
    # the per-sample CSV is what metric_correlation --scores reads
    body = client.get(f"/analytics/promptcblue/runs/{run.pk}/?format=csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert len(rows) == run.n_items and {"item", "system", "score"} <= set(rows[0])
    assert rows[0]["item"] in set(QAItem.objects.values_list("uid", flat=True))


def test_promptcblue_pages_are_for_organizers_only(two_systems, make_user):
    release, runs, hostile, _ = two_systems
    sample = PromptCblueScore.objects.filter(run=runs[0]).first()
    client = Client()
    client.force_login(make_user("reviewer"))
    for url in (
        "/analytics/promptcblue/",
        f"/analytics/promptcblue/runs/{runs[0].pk}/",
        f"/analytics/promptcblue/runs/{runs[0].pk}/samples/{sample.pk}/",
        "/analytics/promptcblue/plots/overall.svg",
    ):
        assert client.get(url).status_code in (302, 403), url


def test_a_sample_of_another_run_is_not_found(two_systems):
    release, runs, hostile, client = two_systems
    sample = PromptCblueScore.objects.filter(run=runs[0]).first()
    assert client.get(f"/analytics/promptcblue/runs/{runs[1].pk}/samples/{sample.pk}/").status_code == 404


# --- PromptCBLUE per-sample scores beside the physicians -------------------------------------------------------


def test_the_study_report_correlates_promptcblue_sample_scores_with_the_physicians(tmp_path, make_user, organizer):
    from tests.tiny_studies import MODELS, STRICT, study_report, tiny_study

    study = tiny_study(tmp_path, make_user, organizer, rankers=[0, 1, 2, 3], questions=4, overlap=1)
    assert PROMPTCBLUE_METRIC not in study_report(study, organizer).result["correlation"]
    items = list(QAItem.objects.filter(pk__in=study.questions.values_list("item_id", flat=True)))
    for name in MODELS:
        run = ScoringRun.objects.create(
            system=System.objects.get(name=name), profile=ScoringRun.PROMPTCBLUE, finished_at=timezone.now()
        )
        for item in items:  # the better the physicians rank the model, the higher its sample score
            PromptCblueScore.objects.create(
                run=run, item=item, task="CHIP-STS", sample_id=item.uid, score=1 / STRICT[name], gold="是的",
                prediction="是的", stats=["是的", "是的"],
            )  # fmt: skip
    result = study_report(study, organizer).result
    block = result["correlation"][PROMPTCBLUE_METRIC]
    assert block["segment_tau_b"]["value"] == pytest.approx(1.0)
    assert set(result["scatter"][PROMPTCBLUE_METRIC]["systems"]) == set(MODELS)
