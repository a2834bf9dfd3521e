"""Page titles: every template's title block is one line of text, and pages render it as such."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]
TITLE_BLOCK = re.compile(r"{% block title %}(.*?){% endblock %}", re.S)


def _templates():
    return sorted(
        p for app in ("portal", "annotation", "ranking", "analytics", "home") for p in (ROOT / app).rglob("*.html")
    )


@pytest.mark.parametrize("path", _templates(), ids=lambda p: str(p.relative_to(ROOT)))
def test_title_block_is_plain_text_on_one_line(path):
    text = path.read_text(encoding="utf-8")
    for title in TITLE_BLOCK.findall(text):
        assert "\n" not in title and "<" not in title, f"{path}: title block holds markup: {title[:80]!r}"


@pytest.mark.django_db
def test_study_list_title_is_just_the_page_name(organizer_client):
    html = organizer_client.get(reverse("study_list")).content.decode()
    title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
    assert title.startswith("Preference studies") and "<" not in title and "&lt;" not in title
    assert html.count("<h2>Systems</h2>") == 1


def test_stored_keys_and_values_are_written_for_people():
    from portal.templatetags.portal_tags import label, readable

    assert label("items_created") == "Items created" and label("n_items") == "Number of items"
    assert (
        readable({"n_resamples": 1000, "seed": 0, "study_id": None})
        == "number of resamples 1,000 · seed 0 · study id —"
    )
    assert readable(0.123456789) == "0.1235" and readable(True) == "yes" and readable(["a", 2.5]) == "a, 2.5"
    assert readable(1e300) == "1.000e+300" and readable([]) == "—"


DATE_FILTER = re.compile(r"\|date(?::\s*(['\"])(.*?)\1)?")
NAMED_FORMATS = {None, "DATE_FORMAT", "DATETIME_FORMAT", "SHORT_DATE_FORMAT", "SHORT_DATETIME_FORMAT", "c"}


@pytest.mark.parametrize("path", _templates(), ids=lambda p: str(p.relative_to(ROOT)))
def test_dates_use_the_one_house_format(path):
    """A hand-written format in a template ("Y-m-d H:i") is how pages ended up with three date styles."""
    text = path.read_text(encoding="utf-8")
    for match in DATE_FILTER.finditer(text):
        assert match.group(2) in NAMED_FORMATS, f"{path}: |date:{match.group(0)[6:]} — use |date or DATETIME_FORMAT"


def test_house_date_formats():
    from datetime import UTC, datetime

    from django.template import Context, Template

    moment = datetime(2026, 11, 24, 9, 5, tzinfo=UTC)
    html = Template('{{ m|date }} | {{ m|date:"DATETIME_FORMAT" }} | {{ m }}').render(Context({"m": moment}))
    assert html == "24 Nov 2026 | 24 Nov 2026, 09:05 UTC | 24 Nov 2026, 09:05 UTC"
