"""Template filters of the report pages: labels and numbers for people (one home: ``analytics.presentation.tables``)."""

from django import template

from analytics.presentation.tables import human_label, interval_text, section_label
from portal.templatetags.portal_tags import percent

register = template.Library()

register.filter("human", human_label)
register.filter("section", section_label)
register.filter("percent", percent)


@register.filter
def interval(ci) -> str:
    """A 95 % interval in a table cell (:func:`analytics.presentation.tables.interval_text`): "0.80 – 1.40",
    "—", or "not estimable" for one of no width."""
    return interval_text(ci)


@register.filter
def cell_of(cells: dict, key) -> str:
    """``cells[key]`` or "—": a per-system column (the harm rate) looked up beside a leaderboard's row."""
    return (cells or {}).get(key) or "—"
