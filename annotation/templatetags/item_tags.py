"""How pages name an item: by its question, which people recognise, rather than by its uid."""

from django import template
from django.utils.text import Truncator

from annotation.qa_types import benchmark_label, expects_source_excerpt, task_type_label

register = template.Library()

TITLE_LENGTH = 80


@register.filter
def item_title(item, length: int = TITLE_LENGTH) -> str:
    """``{{ item|item_title }}``: the item's question on one line, cut to ``length`` characters with an ellipsis.

    Plain text, so the template escapes it like any other value; pages put the uid beside it as a detail."""
    question = " ".join(str(getattr(item, "question", "") or "").split())
    return Truncator(question).chars(int(length)) if question else str(getattr(item, "uid", ""))


@register.filter
def task_label(task_type: str) -> str:
    """``{{ item.extra.task_type|task_label }}``: a PromptCBLUE task key in words."""
    return task_type_label(task_type)


@register.filter
def expects_excerpt(item) -> bool:
    """``{% if item|expects_excerpt %}``: whether a missing excerpt is a gap (see ``expects_source_excerpt``)."""
    return expects_source_excerpt(item.benchmark)


@register.filter
def benchmark_name(name: str) -> str:
    """``{{ item.benchmark|benchmark_name }}``: "promptcblue" → "PromptCBLUE"."""
    return benchmark_label(name)
