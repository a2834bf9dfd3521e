"""The Task-1 leaderboard per system: how much of the release it answered (and what the scorer did with the rest),
n and a 95 % bootstrap interval over items per figure, and figures rounded to what their interval supports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from django.utils import timezone

from analytics.leaderboards import NOT_A_MEAN, latest_runs, task1_cells, task1_table
from analytics.models import AnswerScore, ScoringRun
from analytics.presentation.task1 import coverage_text, decimals_for
from analytics.scoring.runs import scoring_run_execute
from annotation.models import QAItem
from annotation.services.imports import items_import
from annotation.services.releases import release_freeze
from metrics.gold import gold_text
from ranking.models import System, SystemOutput
from stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


def _tiny_release():
    """A release of three true / false and two multiple-choice items."""
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    tf = list(QAItem.objects.filter(qa_type="true_false").order_by("pk")[:3])
    mc = list(QAItem.objects.filter(qa_type="multiple_choice").order_by("pk")[:2])
    QAItem.objects.filter(pk__in=[i.pk for i in tf + mc]).update(
        status="verified", final_verdict="correct", final_relevance=5, final_source="primary"
    )
    release = release_freeze(name="tiny", rule={"statuses": ["verified"], "final_verdict": None, "min_relevance": None})
    assert release.items.count() == 5
    return release, tf, mc


def _right(item: QAItem) -> str:
    return gold_text(item.qa_type, item.raw)


def _wrong(item: QAItem) -> str:
    return "false" if _right(item).strip().lower().startswith("true") else "true"


@pytest.fixture
def scored_tiny_release():
    """A system that answers four of the five items: the first true / false item right, the second wrong, the
    third not at all; both multiple-choice items right."""
    release, tf, mc = _tiny_release()
    system = System.objects.create(name="FOUR-OF-FIVE")
    SystemOutput.objects.create(system=system, item=tf[0], response=_right(tf[0]))
    SystemOutput.objects.create(system=system, item=tf[1], response=_wrong(tf[1]))
    for item in mc:
        SystemOutput.objects.create(system=system, item=item, response=_right(item))
    run = ScoringRun.objects.create(system=system, release=release)
    scoring_run_execute(run=run)
    run.refresh_from_db()
    return release, run


def test_a_missing_answer_is_left_out_of_its_type_and_the_page_says_so(scored_tiny_release, organizer_client):
    release, run = scored_tiny_release
    # What the scorer did with the unanswered item: 1 right of the 2 answered (not 1 of 3), both MC right, and the
    # five QA types without any answer count 0 in Overall.
    assert run.n_items == 4
    assert run.summary["true_false_accuracy"] == pytest.approx(1 / 2)
    assert run.summary["multiple_choice_average"] == pytest.approx(1.0)
    assert run.summary["overall_effectiveness"] == pytest.approx((0.5 + 1.0) / 7)
    page = organizer_client.get(f"/analytics/task1/?release={release.pk}").content.decode()
    assert "4 of 5 release items answered; the missing one is not scored" in page
    assert "mean over its answered items" in page and "scores 0, in Overall too" in page


def test_each_figure_has_n_and_the_bootstrap_interval_over_items(scored_tiny_release):
    release, run = scored_tiny_release
    row = task1_table(release=release)[0]
    cells = task1_cells(latest_runs(release=release)[0], row)
    assert (cells["tf"].n, cells["mc"].n, cells["overall"].n) == (2, 2, 4)
    # One right and one wrong answer: a resample draws both alike with probability 1/2, and 2.5 % of 1,000
    # resamples is far from that, so the percentile interval is the whole range.
    assert cells["tf"].ci == pytest.approx((0.0, 1.0))
    # Two right answers: every resample is right; an interval of no width.
    assert cells["mc"].ci == pytest.approx((1.0, 1.0))
    assert cells["list_f1"].n == 0 and cells["list_f1"].ci is None

    # Overall, recomputed here with plain numpy over the same resamples of the four answers (in the order they are
    # stored): the seven type means from the drawn items, a type the resample misses making it undefined.
    scores = list(AnswerScore.objects.filter(run=run).order_by("pk").values_list("qa_type", "correct"))
    kinds = np.array([q for q, _ in scores])
    right = np.array([float(c) for _, c in scores])
    draws = np.random.default_rng(DEFAULT_SEED).integers(0, len(scores), size=(DEFAULT_RESAMPLES, len(scores)))
    overall = []
    for draw in draws:
        tf, mc = right[draw][kinds[draw] == "true_false"], right[draw][kinds[draw] == "multiple_choice"]
        overall.append((tf.mean() + mc.mean()) / 7 if len(tf) and len(mc) else np.nan)
    low, high = np.nanpercentile(overall, [2.5, 97.5])
    estimate = (0.5 + 1.0) / 7
    assert cells["overall"].value == pytest.approx(estimate)
    assert cells["overall"].ci == pytest.approx((min(low, estimate), max(high, estimate)))


def test_the_page_rounds_each_figure_to_its_interval(scored_tiny_release, organizer_client):
    release, _ = scored_tiny_release
    page = organizer_client.get(f"/analytics/task1/?release={release.pk}").content.decode()
    assert "0.5000" not in page and "1.0000" not in page  # no longer four decimals everywhere
    # TF: interval 0 – 1, one decimal; MC: no width, three decimals and said to be no interval
    assert '<span class="value">0.5</span>' in page and "0.0 – 1.0" in page
    assert '<span class="value">1.000</span>' in page and "not estimable from 2 answers" in page
    assert "n = 2" in page and "n = 4" in page
    csv_text = organizer_client.get(f"/analytics/task1/?release={release.pk}&format=csv").content.decode()
    header, line = csv_text.splitlines()[:2]
    values = dict(zip(header.split(","), line.split(","), strict=True))
    assert values["release_items"] == "5" and values["tf_n"] == "2" and float(values["tf_ci_high"]) == 1.0


def test_a_figure_that_is_not_a_mean_over_answers_gets_no_interval():
    """The public profile's list F1 is a macro over option labels: resampling the per-answer F1 would bootstrap
    another statistic; the cell says so instead (and so does Overall, which contains it)."""
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    lists = list(QAItem.objects.filter(qa_type="list")[:2])
    run = ScoringRun.objects.create(
        system=System.objects.create(name="LISTS"),
        finished_at=timezone.now(),
        summary={"list_overall_macro_avg_f1_score": 0.4, "overall_effectiveness": 0.4 / 7},
    )
    for index, (item, f1) in enumerate(zip(lists, (0.0, 1.0), strict=True)):
        AnswerScore.objects.create(run=run, item=item, qa_type="list", index=index, f1=f1)
    cells = task1_cells(run, task1_table()[0])
    assert cells["list_f1"].ci is None and cells["list_f1"].reason == NOT_A_MEAN and cells["list_f1"].n == 2
    assert cells["overall"].ci is None and "not a mean over the answers" in cells["overall"].reason


@pytest.mark.parametrize(
    ("ci", "decimals"),
    [(None, 3), ((0.5, 0.5), 3), ((0.0, 1.0), 1), ((0.61, 0.83), 1), ((0.905, 0.955), 2), ((0.951, 0.958), 3)],
)
def test_decimals_follow_the_width_of_the_interval(ci, decimals):
    assert decimals_for(ci) == decimals


def test_coverage_in_words():
    assert coverage_text(16, 16) == "all 16 release items answered"
    assert coverage_text(15, 16).startswith("15 of 16 release items answered; the missing one is not scored")
    assert coverage_text(13, 16).startswith("13 of 16 release items answered; the 3 missing ones are not scored")
