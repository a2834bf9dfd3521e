from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    """``{{ row|get_item:key }}``: dictionary lookup with a variable key."""
    return mapping.get(key) if hasattr(mapping, "get") else None
