"""Template filters of the report pages: labels and numbers for people (one home: ``analytics.presentation.tables``)."""

from django import template

from analytics.presentation.tables import human_label, section_label
from portal.templatetags.portal_tags import percent

register = template.Library()

register.filter("human", human_label)
register.filter("section", section_label)
register.filter("percent", percent)


@register.filter
def cell_of(cells: dict, key) -> str:
    """``cells[key]`` or "—": a per-system column (the harm rate) looked up beside a leaderboard's row."""
    return (cells or {}).get(key) or "—"
