"""The study report end to end on a fixture study: three physicians rank every question, two systems are
scored, and the report job produces agreement, correlation and both leaderboards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from analytics.models import Report
from analytics.services.requests import report_request, scoring_request
from annotation.models import QAItem
from annotation.services.imports import items_import
from portal.models import Job
from ranking.models import StudyAnswer, System
from ranking.services.outputs import outputs_import
from ranking.services.queue import task_next
from ranking.services.studies import study_create
from ranking.services.submissions import task_slots, task_submit

ROOT = Path(__file__).resolve().parents[2]
SYSTEMS = ["GOOD-SYSTEM", "WEAK-SYSTEM"]

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _outputs(tmp_path, name, text):
    path = tmp_path / f"{name}.jsonl"
    path.write_text(
        "".join(
            json.dumps({"item_uid": i.uid, "system": name, "response": text(i)}) + "\n" for i in QAItem.objects.all()
        )
    )
    outputs_import(system_name=name, paths=[path])


def _ranked_fixture_study(tmp_path, make_user, organizer):
    """Two scored systems; three physicians each rank every question good > reference > weak."""
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    gold = {
        "multiple_choice": lambda i: i.correct_answer,
        "list": lambda i: ", ".join(i.answer_list),
        "short_inverse": lambda i: i.incorrect_explanation,
    }
    _outputs(tmp_path, SYSTEMS[0], lambda i: gold.get(i.qa_type, lambda j: j.answer)(i))
    _outputs(tmp_path, SYSTEMS[1], lambda i: "I am not sure.")
    study = study_create(
        name="fixture", systems=SYSTEMS, qa_types=["short_answer", "multi_hop"], seed=3, user=organizer
    ).study
    for name in SYSTEMS:
        scoring_request(system=System.objects.get(name=name), user=organizer)
    rankers = [make_user("ranker") for _ in range(3)]
    names = dict(StudyAnswer.objects.filter(question__study=study).values_list("pk", "system__name"))
    preferred = {SYSTEMS[0]: 1, "reference": 2, SYSTEMS[1]: 3}  # every physician: good > reference > weak
    for ranker in rankers:
        while (task := task_next(study=study, ranker=ranker)) is not None:
            answers = {
                slot: {"rank": preferred[names[answer_id]], "tag": "good" if preferred[names[answer_id]] < 3 else "bad"}
                for slot, answer_id in zip(task_slots(task), task.order, strict=True)
            }
            task_submit(task_id=task.pk, ranker=ranker, answers=answers, idempotency_key=f"{task.pk}")
    return study


def test_study_report_on_a_fixture_study(tmp_path, make_user, organizer):
    study = _ranked_fixture_study(tmp_path, make_user, organizer)
    report = report_request(kind="study", params={"study_id": study.pk, "n_resamples": 200}, user=organizer)
    report = Report.objects.get(pk=report.pk)
    result = report.result
    assert result["n_questions"] == 10 and result["n_judgements"] == 90
    # Identical rankings from every physician: perfect concordance.
    assert result["ranking_agreement"]["kendall_w"]["value"] == pytest.approx(1.0)
    assert result["ranking_agreement"]["mean_pairwise_tau_b"]["value"] == pytest.approx(1.0)
    board = {row["system"]: row for row in result["human_leaderboard"]}
    assert board[SYSTEMS[0]]["strength"] > board["reference"]["strength"] > board[SYSTEMS[1]]["strength"]
    assert board["reference"]["is_reference"] and board[SYSTEMS[0]]["mean_rank"] == 1.0
    # The metric agrees with the physicians on every question (reference excluded from the correlation).
    assert result["correlation"]["semantic"]["segment_tau_b"]["value"] == pytest.approx(1.0)
    assert result["correlation"]["semantic"]["pairwise_accuracy"]["value"] == pytest.approx(1.0)
    # Two systems: system-level correlation is undefined, and says why.
    assert result["correlation"]["semantic"]["system_pearson"]["value"] is None
    assert result["correlation"]["semantic"]["system_pearson"]["undefined_reason"]
    assert result["reference"]["share_ranked_below_a_model"] == pytest.approx(1.0)
    assert {row["system"] for row in result["automatic_leaderboard"]} == set(SYSTEMS)
    # The good system never lost: the board says so on the page, in a sentence and without a parameter as code.
    assert any("never won (or never lost)" in note for note in result["human_leaderboard_notes"])
    organizer_client = Client()
    organizer_client.force_login(organizer)
    page = organizer_client.get(reverse("report_detail", args=[report.pk])).content.decode()
    assert "Some system never won (or never lost)" in page and "alpha=" not in page


def test_study_report_without_wordnet_stores_null_meteor_with_the_reason(tmp_path, make_user, organizer, monkeypatch):
    """METEOR unavailable (no WordNet) used to put NaN means in the leaderboard: PostgreSQL refused the JSON and
    the report job failed. The report now succeeds; METEOR is null, the reason is stored and shown."""
    from metrics import TextMetrics
    from metrics.nltk_data import build_nltk_data

    build_nltk_data(tmp_path / "nltk", wordnet_source=tmp_path / "no-wordnet")
    without_wordnet = TextMetrics(tmp_path / "nltk", search_default_paths=False)
    assert not without_wordnet.status["meteor"].available
    monkeypatch.setattr("analytics.scoring.runs.settings_text_metrics", lambda: without_wordnet)
    study = _ranked_fixture_study(tmp_path, make_user, organizer)
    report = report_request(kind="study", params={"study_id": study.pk, "n_resamples": 50}, user=organizer)
    report = Report.objects.get(pk=report.pk)
    assert Job.objects.get(pk=report.job_id).status == "succeeded"
    board = report.result["automatic_leaderboard"]
    assert {row["system"] for row in board} == set(SYSTEMS)
    assert all(row["meteor"] is None and row["rouge"] is not None for row in board)
    reason = report.result["automatic_leaderboard_undefined"]["meteor"]
    assert reason.startswith("METEOR was unavailable when the systems were scored: WordNet 3.0")
    assert report.result["correlation"]["meteor"]["undefined_reason"]
    organizer_client = Client()
    organizer_client.force_login(organizer)
    page = organizer_client.get(reverse("report_detail", args=[report.pk])).content.decode()
    assert "METEOR was unavailable when the systems were scored" in page and "nan" not in page.lower()
