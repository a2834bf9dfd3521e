"""The one way pages write a moment (the ``when`` filter): a <time> element with the ISO instant for the browser to
rewrite in the viewer's zone, and the server's text in its own zone as the fallback."""

from __future__ import annotations

from datetime import UTC, date, datetime

from django.template import Context, Template
from django.test import override_settings

from portal.templatetags.portal_tags import when

MOMENT = datetime(2026, 12, 6, 2, 58, tzinfo=UTC)


def test_a_moment_is_a_time_element_with_the_servers_text():
    assert str(when(MOMENT)) == (
        '<time datetime="2026-12-06T02:58:00+00:00" data-local-time="datetime">6 Dec 2026, 02:58 UTC</time>'
    )
    assert str(when(MOMENT, "time")).endswith('data-local-time="time">02:58 UTC</time>')
    assert str(when(date(2026, 12, 6), "date")).endswith(">6 Dec 2026</time>")
    assert when(None) == "—"


@override_settings(TIME_ZONE="Asia/Shanghai")
def test_the_servers_text_is_in_the_servers_zone_and_the_instant_stays_exact():
    html = Template("{% load portal_tags %}{{ moment|when }}").render(Context({"moment": MOMENT}))
    assert 'datetime="2026-12-06T10:58:00+08:00"' in html and ">6 Dec 2026, 10:58 CST</time>" in html
