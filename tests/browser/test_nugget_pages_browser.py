"""The nugget leaderboard and an item's evidence page in real Chromium: no CSP violation, the plot loads, and
nothing but the tables inside their cards is wider than a 390 px phone."""

from __future__ import annotations

import json

import pytest

from analytics.nuggets.judge_labels import judge_labels_import
from tests.analytics.nugget_rows import hand_study
from tests.browser.layout import assert_page_fits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_nugget_pages_fit_a_phone(page, login, organizer, make_user):
    made = hand_study(make_user)
    lines = [
        json.dumps({"item_uid": "q1", "system": s, "nugget_id": k, "label": "support", "judge": "lenient-llm"})
        for s in ("SYS-A", "SYS-B")
        for k in ("n1", "n2", "n3")
    ]
    judge_labels_import(study=made.study, source=lines, name="judge.jsonl", user=None)
    login(organizer)
    pages = [
        f"/analytics/studies/{made.study.pk}/nuggets/",
        f"/analytics/studies/{made.study.pk}/nuggets/?labeller=lenient-llm",
        f"/analytics/studies/{made.study.pk}/nuggets/items/{made.questions[0].pk}/",
        f"/analytics/studies/{made.study.pk}/nuggets/judges/",
    ]
    for width, height in ((1300, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        for n, url in enumerate(pages):
            page.goto(url)
            assert_page_fits(page, width, f"nuggets-{n}")
    page.goto(pages[0])
    page.select_option("select[name=labeller]", "lenient-llm")
    page.click("form.filters button")
    assert "labeller=lenient-llm" in page.url
