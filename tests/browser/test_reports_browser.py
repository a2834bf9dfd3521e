"""Report pages in real Chromium: headline first, plots load and fit the screen, nothing scrolls sideways at
390 px but the tables inside their cards."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.utils import timezone

from analytics.models import Report
from analytics.services.requests import report_request
from annotation.models import QAItem
from annotation.services.imports import items_import
from tests.browser.layout import assert_page_fits
from tests.reviews import done_review

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VERDICTS = ["correct", "correct", "incorrect", "correct", "cannot_tell", "correct", "incorrect", "correct"]


@pytest.fixture
def reports(make_user, organizer):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    items = list(QAItem.objects.order_by("id"))
    a, b, c = (make_user("reviewer") for _ in range(3))
    for n, verdict in enumerate(VERDICTS):
        item = items[n * 3]
        done_review(item, a, "primary", verdict, 5 - n % 3, server_seconds=20 + n)
        other = "incorrect" if n == 3 else verdict
        done_review(item, b if n % 4 else c, "secondary", other, 4 - n % 2, server_seconds=40)
    vetting = report_request(kind="vetting_agreement", params={"n_resamples": 100}, user=organizer)
    quality = report_request(kind="reviewer_quality", user=organizer)
    study = Report.objects.create(
        kind="study",
        params={"study_id": 1},
        finished_at=timezone.now(),
        result={
            "study": "Browser study",
            "n_questions": 12,
            "n_judgements": 108,
            "ranking_agreement": {
                "kendall_w": {
                    "name": "kendall_w",
                    "value": 0.52,
                    "ci_low": 0.3,
                    "ci_high": 0.7,
                    "n_items": 12,
                    "n_raters": 3,
                    "undefined_reason": None,
                },
            },
            "human_leaderboard": [
                {
                    "system": "GOOD-SYSTEM",
                    "strength": 1.1,
                    "strength_ci": [0.8, 1.4],
                    "win_rate": 0.8,
                    "mean_rank": 1.3,
                    "is_reference": False,
                    "n_questions": 12,
                },
                {
                    "system": "reference",
                    "strength": 0.2,
                    "strength_ci": [0.0, 0.4],
                    "win_rate": 0.5,
                    "mean_rank": 2.0,
                    "is_reference": True,
                    "n_questions": 12,
                },
                {
                    "system": "中文系统-7B",
                    "strength": -1.3,
                    "strength_ci": [-1.6, -1.0],
                    "win_rate": 0.2,
                    "mean_rank": 2.7,
                    "is_reference": False,
                    "n_questions": 12,
                },
            ],
            "correlation": {
                "semantic": {
                    "segment_tau_b": {
                        "name": "segment_tau_b",
                        "value": 0.4,
                        "ci_low": 0.1,
                        "ci_high": 0.6,
                        "n_items": 12,
                        "n_raters": 3,
                        "undefined_reason": None,
                    }
                },
                "meteor": {"undefined_reason": "no scores for this metric: score the study's systems first"},
            },
            "scatter": {
                "semantic": {"systems": ["GOOD-SYSTEM", "中文系统-7B"], "human": [-1.3, -2.7], "metric": [0.8, 0.3]}
            },
        },
    )
    return {"vetting_agreement": vetting, "reviewer_quality": quality, "study": study}


@pytest.mark.parametrize("kind", ["vetting_agreement", "reviewer_quality", "study"])
def test_report_page_leads_with_its_reading_and_fits_a_phone(page, login, organizer, reports, kind):
    login(organizer)
    for width, height in ((1300, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"/analytics/reports/{reports[kind].pk}/")
        reading = page.locator(".headline .reading")
        assert reading.is_visible() and len(reading.inner_text()) > 30
        if kind == "study":
            assert "their rankings agreed moderately (Kendall's W 0.52)" in reading.inner_text()
        # The reading comes before the plots and the tables.
        assert reading.bounding_box()["y"] < page.locator("h2").first.bounding_box()["y"]
        assert_page_fits(page, width, kind)


def test_task1_page_shows_one_box_per_system_and_fits_a_phone(page, login, organizer):
    from analytics.models import AnswerScore, ScoringRun
    from ranking.models import System

    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    items = list(QAItem.objects.filter(qa_type__in=["short_answer", "multi_hop", "short_inverse"]))
    for k, name in enumerate(["GOOD-SYSTEM", "WEAK-SYSTEM", "中文系统-7B"]):
        run = ScoringRun.objects.create(
            system=System.objects.create(name=name), finished_at=timezone.now(), summary={"overall_effectiveness": 0.5}
        )
        for index, item in enumerate(items):
            AnswerScore.objects.create(
                run=run, item=item, qa_type=item.qa_type, index=index, semantic=(index * 7 % 10) / 10 / (k + 1)
            )
    login(organizer)
    for width, height in ((1300, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto("/analytics/task1/")
        assert page.locator("img.plot").all()
        assert_page_fits(page, width, "task1", plots_fit=False)


@pytest.mark.parametrize("rankings", [1, 2])
def test_a_tiny_study_report_says_it_is_too_early_and_its_plots_load(
    page, login, organizer, make_user, tmp_path, rankings
):
    """Usability F16 and F17 in the browser: a study of one or two rankings (the best system first and the worst
    last in each) led with a confident headline, and its leaderboard plot was a broken image (a 500)."""
    from tests.tiny_studies import study_report, tiny_study

    study = tiny_study(tmp_path, make_user, organizer, rankers=list(range(rankings)), questions=rankings, overlap=1)
    report = study_report(study, organizer)
    login(organizer)
    for width, height in ((1280, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"/analytics/reports/{report.pk}/")
        reading = page.locator(".headline .reading")
        assert reading.is_visible()
        text = reading.inner_text()
        assert text.startswith(f"Too early to read: {rankings} question") and f"{10 - rankings} more to rank" in text
        assert "preferred" not in text and "follows physicians best" not in text
        assert reading.bounding_box()["y"] < page.locator("h2").first.bounding_box()["y"]
        names = [img.get_attribute("src") for img in page.locator("img.plot").all()]
        assert any("human_leaderboard" in src for src in names) and any("metric_correlation" in src for src in names)
        assert_page_fits(page, width, f"tiny-study-{rankings}")  # every plot decodes: none is a 500
