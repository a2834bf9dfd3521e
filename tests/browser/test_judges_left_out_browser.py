"""A judge whose stored score is not a finite number (kept from before the import refused such scores) is named on
the study report with the answer that holds it, at desktop and phone width, and the other judges are still shown
(the December security review, finding 4: one infinite score removed every judge from the report)."""

from __future__ import annotations

import json

import pytest

from analytics.judges.scores import judge_scores_import
from analytics.models import JudgeScore
from tests.analytics.judge_rows import ranked_study, score_lines
from tests.browser.layout import assert_page_fits
from tests.report_rows import stored_study_report

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_a_judge_left_out_is_named_with_its_answer(page, login, make_user, width):
    made = ranked_study(make_user)
    lines = score_lines("good judge", {"SYS-A": 9, "SYS-B": 6, "SYS-C": 1})
    lines += score_lines("broken judge", {"SYS-A": 2, "SYS-B": 9, "SYS-C": 1})
    data = "\n".join(json.dumps(line) for line in lines).encode()
    judge_scores_import(study=made.study, source=data, name="judges.jsonl", user=None)
    JudgeScore.objects.filter(judge="broken judge", answer=made.answers["q3", "SYS-C"]).update(score=float("inf"))
    organizer = make_user("organizer")
    report = stored_study_report(made.study, created_by=organizer, n_resamples=50, seed=1)
    page.set_viewport_size({"width": width, "height": 900})
    login(organizer)
    page.goto(f"/analytics/reports/{report.pk}/")
    left_out = page.locator("#judges-left-out")
    left_out.scroll_into_view_if_needed()
    assert left_out.is_visible()
    assert left_out.inner_text() == (
        "Left out of this comparison: broken judge: its score of system 'SYS-C' on item 'q3' is inf, not a finite "
        "number; import this judge's file again."
    )
    assert "good judge" in page.locator("#judges table").inner_text()
    assert_page_fits(page, width, "judges-left-out")
