"""Times in the viewer's time zone, one way on every page: with the browser in Asia/Shanghai and a Chinese locale,
the job list, a job page and the guideline list all read "6 Dec 2026, 10:58 GMT+8" (English, 24-hour clock, the
zone named), the server's UTC text kept as the tooltip."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
MOMENT = datetime(2026, 12, 6, 2, 58, tzinfo=UTC)


def test_times_are_written_one_way_in_the_viewers_zone(chromium_browser, live_server, make_user):
    from annotation.services.guidelines import guideline_version_create
    from portal.models import Job

    organizer = make_user("organizer")
    job = Job.objects.create(kind="import_items", status=Job.Status.SUCCEEDED, created_by=organizer)
    Job.objects.filter(pk=job.pk).update(created_at=MOMENT, started_at=MOMENT, finished_at=MOMENT)
    guideline_version_create(benchmark="cliniqlink", qa_type="short_answer", text="Check the answer.", author=organizer)

    context = chromium_browser.new_context(
        base_url=live_server.url, timezone_id="Asia/Shanghai", locale="zh-CN", viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    page.goto("/accounts/login/")
    page.fill("input[name=login]", organizer.email)
    page.fill("input[name=password]", "pw-for-tests-123")
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login" not in url)

    one_way = re.compile(r"\d{1,2} [A-Z][a-z]{2} \d{4}(, \d{2}:\d{2} GMT\+8)?|\d{2}:\d{2} GMT\+8")
    for path in ("/jobs/", f"/jobs/{job.pk}/", "/organize/guidelines/"):
        page.goto(path)
        times = page.locator("time[data-local-time]")
        assert times.count() > 0, path
        page.wait_for_function("() => !document.querySelector('time[data-local-time]:not([data-localised])')")
        for n in range(times.count()):
            text = times.nth(n).inner_text()
            assert one_way.fullmatch(text), (path, text)
            assert times.nth(n).get_attribute("title").endswith("UTC"), path
    page.goto("/jobs/")
    assert "6 Dec 2026, 10:58 GMT+8" in page.locator("time[data-local-time]").all_inner_texts()
    context.close()
