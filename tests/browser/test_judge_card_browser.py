"""A judge's card as an organizer meets it, in Chromium at desktop and phone width: the judge's scores (with
probabilities, its model family and a "cannot judge") and its pairwise verdicts uploaded through the import page's two
forms, a study report, then the judges table's link to the card, whose sections read in words, whose reliability
diagram loads, and which keeps the page's width."""

from __future__ import annotations

import pytest
from django.utils import timezone

from analytics.models import Report
from analytics.services.reports import report_study
from ranking.models import System
from tests.analytics.judge_rows import ranked_study
from tests.browser.layout import assert_page_fits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PROBABILITY = {"SYS-A": 0.9, "SYS-B": 0.6, "SYS-C": 0.3}


@pytest.mark.parametrize("width", [1280, 390])
def test_an_organizer_imports_a_judge_and_reads_its_card(page, login, make_user, tmp_path, width):
    made = ranked_study(make_user, questions=10)
    System.objects.filter(name="SYS-A").update(family="ward")
    organizer = make_user("organizer")
    scores = ["item_uid,system,judge,score,probability,judge_family,label"]
    for i in range(1, 11):
        for system, probability in PROBABILITY.items():
            if (i, system) == (10, "SYS-C"):
                scores.append(f"q{i},{system},ward judge,,,ward,cannot judge")
            else:
                scores.append(f"q{i},{system},ward judge,{probability * 10:g},{probability},ward,")
    (tmp_path / "scores.csv").write_text("\n".join(scores) + "\n")
    verdicts = ["item_uid,judge,first,second,verdict"]
    for i in range(1, 7):  # A against B in both orders; the judge picks whichever it reads first on q1..q3
        verdicts += [
            f"q{i},ward judge,SYS-A,SYS-B,first",
            f"q{i},ward judge,SYS-B,SYS-A,{'first' if i <= 3 else 'second'}",
        ]
    (tmp_path / "verdicts.csv").write_text("\n".join(verdicts) + "\n")

    page.set_viewport_size({"width": width, "height": 900})
    login(organizer)
    page.goto(f"/analytics/studies/{made.study.pk}/judges/scores/")
    page.set_input_files("input[name=file]", str(tmp_path / "scores.csv"))
    page.click("main form button:text-is('Import')")
    assert "Imported 29 scores" in page.locator("main").inner_text()
    page.set_input_files("input[name=verdicts_file]", str(tmp_path / "verdicts.csv"))
    page.click("main form button:text-is('Import verdicts')")
    listed = page.locator("main").inner_text()
    assert "ward judge (29 scores, 1 abstention, 12 verdicts)" in listed
    assert_page_fits(page, width, "judge-import")

    result = report_study(study_id=made.study.pk, n_resamples=50, seed=1)
    result["computed_at"] = timezone.now().isoformat()
    report = Report.objects.create(
        kind="study",
        params={"study_id": made.study.pk},
        result=result,
        created_by=organizer,
        finished_at=timezone.now(),
    )
    page.goto(f"/analytics/reports/{report.pk}/")
    page.locator("#judges a", has_text="ward judge").click()
    page.wait_for_url(f"**/analytics/reports/{report.pk}/judges/ward%20judge/")
    main = page.locator("main").inner_text()
    assert "Judge card: ward judge" in main and "model family ward" in main
    assert "Expected calibration error" in page.locator("#card-calibration").inner_text()
    position = page.locator("#card-position").inner_text()
    assert "Of 6 pairs judged in both orders, the verdict changed with the order in 50 %" in position
    assert "in 3 of them the judge chose whichever answer came first" in position
    assert "10 answers of its own family" in page.locator("#card-self-preference").inner_text()
    assert "3 % (1 % – 17 %) of 30" in page.locator("#card-abstention").inner_text()
    plot = page.locator("#card-calibration img.plot")
    plot.scroll_into_view_if_needed()
    for _ in range(100):
        if page.evaluate("(img) => img.complete && img.naturalWidth > 0", plot.element_handle()):
            break
        page.wait_for_timeout(100)
    else:
        pytest.fail("the reliability diagram did not load")
    assert_page_fits(page, width, "judge-card", plots_fit=True)
