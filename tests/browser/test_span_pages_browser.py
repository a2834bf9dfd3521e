"""The hallucination-span pages in real Chromium: the detector leaderboard, an item's spans and the study report's
span sections load without a CSP violation, their plots load, and nothing but the tables is wider than a 390 px
phone."""

from __future__ import annotations

import json

import pytest

from analytics.spans.detectors import span_detector_import
from tests.browser.layout import assert_page_fits
from tests.report_rows import stored_study_report
from tests.span_rows import spanned_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_span_pages_fit_a_phone(page, login, organizer, make_user):
    made = spanned_study(make_user)
    lines = [
        json.dumps({"id": f"{uid}/{answer.pk}", "soft_labels": [{"start": 0, "end": 3, "prob": 0.8}]}).encode()
        for (uid, _), answer in made.answers.items()
    ]
    span_detector_import(study=made.study, detector="Demo-like detector", source=lines, name="d.jsonl", user=None)
    report = stored_study_report(made.study, n_resamples=50)
    login(organizer)
    pages = [
        f"/analytics/studies/{made.study.pk}/spans/",
        f"/analytics/studies/{made.study.pk}/spans/items/{made.questions['s1'].pk}/",
        f"/analytics/studies/{made.study.pk}/spans/items/{made.questions['s2'].pk}/",
        f"/analytics/reports/{report.pk}/",
    ]
    for width, height in ((1300, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        for n, url in enumerate(pages):
            page.goto(url)
            assert_page_fits(page, width, f"spans-{n}")
    page.goto(pages[1])
    assert page.locator(".span-text mark.hard").first.inner_text() == "cancer"
