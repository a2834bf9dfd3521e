from datetime import datetime

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html

from portal.job_kinds import job_kind_label, job_reading

register = template.Library()


@register.simple_tag(takes_context=True)
def nav_link(context, url_name: str, text: str, *not_under: str):
    """A top-bar link, marked ``aria-current`` on its own pages (the address starts with it) so people see where
    they are; ``not_under``: other top-bar links whose addresses start with this one's (``/review/mine/`` under
    ``/review/``), whose pages are theirs, so that one link only is marked."""
    href = reverse(url_name)
    request = context.get("request")
    if (
        request is not None
        and request.path.startswith(href)
        and not any(request.path.startswith(reverse(other)) for other in not_under)
    ):
        return format_html('<a href="{}" aria-current="page">{}</a>', href, text)
    return format_html('<a href="{}">{}</a>', href, text)


@register.filter
def job_label(kind: str) -> str:
    """``{{ job.kind|job_label }}``: a job's title as people read it ("Report (team agreement)")."""
    return job_kind_label(kind)


@register.filter
def get_item(mapping, key):
    """``{{ row|get_item:key }}``: dictionary lookup with a variable key."""
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.filter
def label(key) -> str:
    """A stored key for people: ``items_created`` → "Items created", ``n_items`` → "Number of items"."""
    text = str(key)
    if text.startswith("n_"):
        text = "number of " + text[2:]
    text = text.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


@register.filter
def percent(value) -> str:
    """A share in [0, 1] as a whole percentage (0.823 → "82 %"); missing → "—"."""
    if value is None or value == "":
        return "—"
    return f"{100 * float(value):.0f} %"


@register.filter
def readable(value) -> str:
    """A stored value for people (job results, report parameters): numbers rounded for reading, lists and mappings
    written out, never Python's repr. Downloads keep full precision."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e15 else f"{value:.3e}"
    if isinstance(value, dict):
        return " · ".join(f"{label(k).lower()} {readable(v)}" for k, v in value.items()) or "—"
    if isinstance(value, list | tuple):
        return ", ".join(readable(v) for v in value) or "—"
    return str(value)


@register.simple_tag
def session_idle_limit() -> str:
    """How long a session may stay idle before it is signed out, in words ("8 hours")."""
    from portal.sessions import session_idle_limit_words

    return session_idle_limit_words()


_WHEN_FORMATS = {"datetime": "DATETIME_FORMAT", "date": "DATE_FORMAT", "time": "TIME_FORMAT"}


@register.filter
def when(value, style: str = "datetime"):
    """A moment for people, the one way pages write it: ``<time>`` holding the server's text ("6 Dec 2026, 02:58
    UTC", config/formats) that portal/local_time.js rewrites in the viewer's own time zone. ``style``: datetime,
    date or time. Nothing given reads "—"."""
    if not value:
        return "—"
    if isinstance(value, datetime) and timezone.is_aware(value):
        value = timezone.localtime(value)
    return format_html(
        '<time datetime="{}" data-local-time="{}">{}</time>',
        value.isoformat(),
        style,
        date_format(value, _WHEN_FORMATS[style]),
    )


@register.simple_tag
def job_reading_of(job) -> dict:
    """``{% job_reading_of job as reading %}``: the sentences, progress words and stage of a job's progress box."""
    return job_reading(job)
