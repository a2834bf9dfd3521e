"""Template filters of the report pages: labels and numbers for people (one home: ``analytics.presentation``)."""

from django import template

from analytics.presentation import human_label, section_label

register = template.Library()

register.filter("human", human_label)
register.filter("section", section_label)


@register.filter
def percent(value) -> str:
    """A share in [0, 1] as a whole percentage (0.823 → "82 %"); missing → "—"."""
    if value is None or value == "":
        return "—"
    return f"{100 * float(value):.0f} %"
