from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    """``{{ row|get_item:key }}``: dictionary lookup with a variable key."""
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.filter
def label(key) -> str:
    """A stored key for people: ``items_created`` → "Items created"."""
    text = str(key).replace("_", " ").strip()
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
