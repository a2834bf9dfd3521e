"""Guideline markdown to HTML, safely: raw HTML in the text is shown as text, never interpreted.

markdown-it-py with ``html`` off escapes every tag and attribute the author types, and refuses ``javascript:``,
``vbscript:``, ``file:`` and ``data:`` link targets. Images are off: a guideline never loads anything from
elsewhere (the Content-Security-Policy would refuse it anyway). Tables are on (CommonMark + GFM tables).
"""

from __future__ import annotations

from functools import cache

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt


@cache
def _parser() -> MarkdownIt:
    return (
        MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
        .enable("table")
        .disable("image")
    )


def guideline_html(text: str) -> SafeString:
    """The guideline ``text`` (markdown) as HTML that is safe to put in a page."""
    return mark_safe(_parser().render(text or ""))  # noqa: S308 - markdown-it escapes all raw HTML (html=False)
