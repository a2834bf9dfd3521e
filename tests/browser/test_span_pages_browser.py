"""The hallucination-span pages in real Chromium: the detector leaderboard, an item's spans and the study report's
span sections load without a CSP violation, their plots load, and nothing but the tables is wider than a 390 px
phone."""

from __future__ import annotations

import json
import os

import pytest
from django.utils import timezone

from analytics.models import Report
from analytics.reports import report_study
from analytics.span_detectors import span_detector_import
from tests.span_rows import spanned_study

SHOTS = os.environ.get("PORTAL_SCREENSHOTS")

pytestmark = pytest.mark.django_db(transaction=True)


def test_span_pages_fit_a_phone(page, login, organizer, make_user):
    made = spanned_study(make_user)
    lines = [
        json.dumps({"id": f"{uid}/{answer.pk}", "soft_labels": [{"start": 0, "end": 3, "prob": 0.8}]}).encode()
        for (uid, _), answer in made.answers.items()
    ]
    span_detector_import(study=made.study, detector="Demo-like detector", source=lines, name="d.jsonl", user=None)
    report = Report.objects.create(
        kind="study",
        params={"study_id": made.study.pk},
        result=report_study(study_id=made.study.pk, n_resamples=50),
        finished_at=timezone.now(),
    )
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
            for img in page.locator("img.plot").all():
                img.scroll_into_view_if_needed()
                assert img.evaluate("i => i.decode().then(() => i.naturalWidth > 0)"), img.get_attribute("src")
                assert img.bounding_box()["width"] <= width
            if SHOTS:
                page.screenshot(path=f"{SHOTS}/spans-{n}-{width}.png", full_page=True)
            wide = page.evaluate(
                "w => [...document.querySelectorAll('main *')]"
                ".filter(e => !e.closest('.table-scroll') && e.getBoundingClientRect().right > w + 1)"
                ".map(e => e.tagName + '.' + e.className)",
                width,
            )
            assert not wide, (url, wide)
    page.goto(pages[1])
    assert page.locator(".span-text mark.hard").first.inner_text() == "cancer"
