"""The study report's judge sections and the judges' import page in Chromium at a phone's width: no CSP violation,
the page keeps its width (wide tables scroll inside their card), the plot loads, an upload goes through, and a refused
one is explained in a compact box."""

from __future__ import annotations

import json
import os

import pytest
from django.utils import timezone

from analytics.judges.scores import judge_scores_import
from analytics.models import Report
from analytics.services.reports import report_study
from tests.analytics.judge_rows import ranked_study, score_lines

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
#: A folder to keep screenshots of the sections in, for a person to look at (unset: none taken).
SHOTS = os.environ.get("PORTAL_TEST_SCREENSHOTS", "")


def test_judges_on_a_phone(page, login, make_user, tmp_path):
    made = ranked_study(make_user, questions=10)  # enough for the report to read its judges
    lines = score_lines("good judge", {"SYS-A": 9, "SYS-B": 6, "SYS-C": 1}, questions=10)
    lines += score_lines("verbose judge", {"SYS-A": 2, "SYS-B": 9, "SYS-C": 1}, questions=10)
    data = "\n".join(json.dumps(line) for line in lines).encode()
    judge_scores_import(study=made.study, source=data, name="judges.jsonl", user=None)
    organizer = make_user("organizer")
    result = report_study(study_id=made.study.pk, n_resamples=50, seed=1)
    result["computed_at"] = timezone.now().isoformat()
    report = Report.objects.create(
        kind="study",
        params={"study_id": made.study.pk},
        result=result,
        created_by=organizer,
        finished_at=timezone.now(),
    )
    page.set_viewport_size({"width": 390, "height": 844})
    login(organizer)
    page.goto(f"/analytics/reports/{report.pk}/")
    judges = page.locator("#judges")
    assert "good judge is in the best cluster" in judges.inner_text()
    assert page.locator("#style-control").is_visible() and page.locator("#harm").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # the prediction-powered estimates: the three estimates and the power sentence, their table scrolling in its card
    ppi = page.locator("#ppi")
    ppi.scroll_into_view_if_needed()
    assert "Physicians only" in ppi.inner_text() and "PPI++" in ppi.inner_text()
    assert "physician-labelled questions" in ppi.inner_text()
    if SHOTS:
        ppi.screenshot(path=f"{SHOTS}/ppi-390.png")
        page.set_viewport_size({"width": 1280, "height": 900})
        ppi.screenshot(path=f"{SHOTS}/ppi-1280.png")
        page.set_viewport_size({"width": 390, "height": 844})
    plot = page.locator("img[src$='/plots/judges.svg']")
    plot.scroll_into_view_if_needed()
    for _ in range(100):  # lazy loading: poll from Playwright's side (a string wait_for_function is an eval)
        if page.evaluate("(img) => img.complete && img.naturalWidth > 0", plot.element_handle()):
            break
        page.wait_for_timeout(100)
    else:
        pytest.fail("the judges' plot did not load")
    page.goto(f"/analytics/studies/{made.study.pk}/judges/scores/")
    assert "good judge" in page.locator("main").inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    upload = tmp_path / "more.csv"
    upload.write_text("item_uid,system,score,judge\nq1,SYS-A,1,third judge\n")
    page.set_input_files("input[name=file]", str(upload))
    page.click("main form button:text-is('Import')")
    assert "Imported 1 score from more.csv" in page.locator("main").inner_text()
    # A refused file: the reason and where, in a compact box (the template's line breaks are not blank lines)
    upload = tmp_path / "latin1.csv"
    upload.write_bytes("item_uid,system,score,judge\nq1,caf\u00e9,1,third judge\n".encode("latin-1"))
    page.set_input_files("input[name=file]", str(upload))
    page.click("main form button:text-is('Import')")
    box = page.locator("section.error-box[role=alert]")
    assert "not UTF-8 text (byte 7)" in box.inner_text() and "File latin1.csv, line 2." in box.inner_text()
    heading, detail = box.locator("h2").bounding_box(), box.locator("p").first.bounding_box()
    gap = detail["y"] - (heading["y"] + heading["height"])
    assert gap < 24, f"{gap:.0f} px between the box's heading and its first line"
