"""Pages that carried inline scripts or styles, and the third-party pages (Swagger UI, admin), work in Chromium
under the Content-Security-Policy: the ``page`` fixture fails any test whose pages broke the policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from analytics.services.requests import report_request
from annotation.services.imports import items_import
from tests.reviews import done_review

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_review_start_report_print_api_docs_and_admin_under_the_policy(page, login, make_user):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    from annotation.models import QAItem

    first, second = make_user("reviewer"), make_user("reviewer")
    for item in QAItem.objects.order_by("id")[:6]:
        done_review(item, first, "primary", "correct", 5)
        done_review(item, second, "secondary", "incorrect", 3)
    organizer = make_user("organizer", "reviewer")
    organizer.is_staff = organizer.is_superuser = True
    organizer.save()
    report = report_request(kind="vetting_agreement", params={"n_resamples": 50}, user=organizer)
    login(organizer)

    response = page.goto(f"/analytics/reports/{report.pk}/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert page.locator("figure img").count() >= 1
    page.goto(f"/analytics/reports/{report.pk}/print/")
    assert page.evaluate("getComputedStyle(document.body).fontFamily").startswith("Georgia")  # the static CSS

    page.goto("/review/")  # the former inline script: "n" takes the next item
    page.check("#guidelines-read")  # asked once before the first item
    page.keyboard.press("n")
    page.wait_for_url(lambda url: "/review/" in url and url.rstrip("/").split("/")[-1].isdigit())

    page.goto("/api/docs/")  # Swagger UI: init script from a URL, no inline style
    page.locator("#swagger-ui .information-container").wait_for()
    page.goto("/admin/")
    assert page.locator("#site-name").is_visible()
