"""``manage.py simulate_vetting``: a small round through the portal's services, its counts checked against the
database; two runs in one database each reporting their own items; arguments refused naming the option."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Adjudication, GoldAnswer, GoldItem, QAItem, Release, Review, VettingConfig
from annotation.models.reliability import ReliabilityFit
from annotation.workflow import ItemStatus, Stage, Verdict

pytestmark = pytest.mark.django_db


def simulate(*arguments: str) -> dict:
    out = StringIO()
    call_command("simulate_vetting", *arguments, "--json", stdout=out)
    return json.loads(out.getvalue())


def run_items(report: dict):
    """The report's own items: those of the batch its release names (the batch is named after the run)."""
    tag = report["release"].removeprefix("Simulation ").split("@")[0]
    return QAItem.objects.filter(batch__name=f"Simulation {tag}", gold__isnull=True)


SMALL = ("--items", "150", "--reviewers", "6", "--wrong-share", "0.15", "--accuracy", "0.7,0.95",
         "--second-share", "0.45", "--policy", "uniform", "--seed", "3")  # fmt: skip


def test_a_small_round_is_vetted_to_the_end_and_its_counts_agree_with_the_database():
    report = simulate(*SMALL)
    items = run_items(report)
    assert report["policy"] == "uniform" and report["items"] == 150 == items.count()
    assert report["unfinished"] == 0
    assert set(items.values_list("status", flat=True)) <= {ItemStatus.VERIFIED, ItemStatus.REJECTED}
    reviews = Review.objects.filter(item__in=items)
    assert report["reviews"] == reviews.count()
    assert report["reviews"] - report["second_reviews"] == 150  # one primary review each
    assert report["second_reviews"] == reviews.filter(stage=Stage.SECONDARY).count()
    assert 40 <= report["second_reviews"] <= 95  # 45 % of 150 drawn, give or take the draw
    assert report["adjudications"] == Adjudication.objects.filter(item__in=items).count()
    assert report["judgements"] == report["reviews"] + report["adjudications"]
    # Only disagreements reach the adjudicators here: every adjudicated item has two reviews that differ.
    for item_id in Adjudication.objects.filter(item__in=items).values_list("item_id", flat=True):
        assert len(set(reviews.filter(item_id=item_id).values_list("verdict", flat=True))) == 2
    verified_correct = items.filter(status=ItemStatus.VERIFIED, final_verdict=Verdict.CORRECT, final_relevance=5)
    assert report["released"] == verified_correct.count() > 0
    assert 0 <= report["wrong_released"] <= report["released"] <= report["items"]
    # Vetting filters: with reviewers right 70 to 95 % of the time, far fewer than 15 % of the released are wrong.
    assert report["wrong_released"] < 0.15 * report["released"]
    estimate = report["estimated_wrong_released"]
    assert 0 <= estimate["low"] <= estimate["mean"] <= estimate["high"] <= report["released"]
    tag = report["release"].removeprefix("Simulation ").split("@")[0]
    assert report["gold_items"] == 5 == GoldItem.objects.filter(item__batch__name=f"Simulation {tag}").count()  # 3 %
    assert report["gold_answers"] == GoldAnswer.objects.filter(reviewer__email__startswith=f"{tag}-").count() > 0
    config = VettingConfig.load()
    assert config.second_share == 0.45 and config.seed.startswith("sim-3-")


def test_the_adaptive_policy_is_set_and_the_model_refitted_after_every_batch_of_reviews(settings):
    settings.RELIABILITY_REFIT_EVERY = 40
    report = simulate(
        "--items", "90", "--reviewers", "5", "--policy", "adaptive", "--second-share", "0.3", "--seed", "5"
    )
    config = VettingConfig.load()
    assert (config.second_review_policy, config.second_share) == ("adaptive", 0.3)
    assert report["policy"] == "adaptive" and report["unfinished"] == 0
    assert report["judgements"] == report["reviews"] + report["adjudications"]
    assert ReliabilityFit.objects.count() == report["reviews"] // 40


def test_two_runs_in_one_database_each_report_their_own_items():
    first = simulate("--items", "60", "--reviewers", "4", "--seed", "11", "--wrong-share", "0.1")
    second = simulate("--items", "40", "--reviewers", "4", "--seed", "12", "--wrong-share", "0.1")
    first_items, second_items = run_items(first), run_items(second)
    assert (first["items"], second["items"]) == (60, 40) == (first_items.count(), second_items.count())
    assert not set(first_items.values_list("pk", flat=True)) & set(second_items.values_list("pk", flat=True))
    assert first["reviews"] == Review.objects.filter(item__in=first_items).count()
    assert second["reviews"] == Review.objects.filter(item__in=second_items).count()
    assert first["reviews"] + second["reviews"] == Review.objects.count()
    # No rule narrows a release to one batch: the second release holds both runs' qualifying items, and each report
    # counts its own.
    later = Release.objects.get(name=second["release"].split("@")[0])
    assert later.item_count == first["released"] + second["released"]
    assert second["released"] == later.items.filter(item__in=second_items).count()
    assert first["release"] != second["release"]


@pytest.mark.parametrize(
    ("arguments", "option"),
    [
        (["--items", "0"], "--items"),
        (["--items", "many"], "--items"),
        (["--reviewers", "1"], "--reviewers"),
        (["--wrong-share", "1.5"], "--wrong-share"),
        (["--second-share", "nan"], "--second-share"),
        (["--accuracy", "0.9,0.6"], "--accuracy"),
        (["--accuracy", "0.7"], "--accuracy"),
        (["--adjudicator-accuracy", "-0.1"], "--adjudicator-accuracy"),
        (["--policy", "random"], "--policy"),
    ],
)
def test_bad_arguments_are_refused_naming_the_option(arguments, option):
    with pytest.raises(CommandError, match=option):
        simulate(*arguments)
    assert not QAItem.objects.exists()
