"""The Task-1 leaderboard in real Chromium at desktop and phone width: per system its coverage in words, each
figure with its interval and n, and the score plots drawn on the page on a 0..1 axis."""

from __future__ import annotations

import pytest

from tests.analytics.test_task1_intervals import _right, _tiny_release, _wrong
from tests.browser.layout import assert_page_fits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_task1_leaderboard_says_what_each_figure_rests_on(page, login, organizer):
    from analytics.models import ScoringRun
    from analytics.scoring.runs import scoring_run_execute
    from ranking.models import System, SystemOutput

    release, tf, mc = _tiny_release()
    system = System.objects.create(name="FOUR-OF-FIVE")
    for item, response in (
        (tf[0], _right(tf[0])),
        (tf[1], _wrong(tf[1])),
        (mc[0], _right(mc[0])),
        (mc[1], _right(mc[1])),
    ):
        SystemOutput.objects.create(system=system, item=item, response=response)
    scoring_run_execute(run=ScoringRun.objects.create(system=system, release=release))
    login(organizer)
    for width, height in ((1280, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"/analytics/task1/?release={release.pk}")
        coverage = page.locator("td .coverage").first
        assert coverage.is_visible()
        assert coverage.inner_text().startswith("4 of 5 release items answered; the missing one is not scored")
        cells = page.locator("td.task1-cell").all_inner_texts()
        assert any(text.split() == ["0.5", "0.0", "–", "1.0", "n", "=", "2"] for text in cells), cells
        assert page.locator("img.plot").count() == 5
        assert_page_fits(page, width, "task1-intervals", plots_fit=False)
