from django import template

from annotation.guideline_markdown import guideline_html

register = template.Library()


@register.filter
def guideline_markdown(text: str):
    """``{{ version.text|guideline_markdown }}``: markdown rendered with raw HTML escaped."""
    return guideline_html(text)
