"""An organizer asks physicians for a sample only, in Chromium at desktop and phone width: from the study page to the
sample page, the form filled with a judge's design, the sample drawn, and the design stated on the study page; both
pages keep their width."""

from __future__ import annotations

import pytest

from analytics.models import JudgeScore
from ranking.models import StudyAnswer, StudyQuestion
from tests.browser.layout import assert_page_fits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_an_organizer_draws_a_physician_sample(page, login, organizer, make_study, width):
    study = make_study(sample_size=8)
    for answer in StudyAnswer.objects.filter(question__study=study).select_related("system"):
        JudgeScore.objects.create(answer=answer, judge="ward-judge", score=0.2 + 0.1 * (answer.pk % 5))
    page.set_viewport_size({"width": width, "height": 900})
    login(organizer)
    page.goto(f"/organize/studies/{study.pk}/")
    page.click("text=Ask physicians for a sample only")
    assert page.url.endswith(f"/analytics/studies/{study.pk}/physician-sample/")
    assert_page_fits(page, width, "physician-sample")
    page.fill("input[name=share]", "0.5")
    page.select_option("select[name=design]", "judge_uncertain")
    page.select_option("select[name=judge]", "ward-judge")
    page.fill("input[name=seed]", "3")
    page.click("button:text-is('Draw the sample')")
    assert page.url.endswith(f"/organize/studies/{study.pk}/")
    drawn = StudyQuestion.objects.filter(study=study, physician_sampled=True).count()
    design = page.locator("#sample-design").inner_text()
    assert f"Physicians rank a sample: {drawn} of {study.questions.count()} questions" in design
    assert "'ward-judge' is least certain" in design
    assert_page_fits(page, width, "study-with-sample")
