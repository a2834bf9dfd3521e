"""Guideline markdown to HTML, safely: raw HTML in the text is shown as text, never interpreted.

markdown-it-py with ``html`` off escapes every tag and attribute the author types, and refuses ``javascript:``,
``vbscript:``, ``file:`` and ``data:`` link targets. Images are off: a guideline never loads anything from
elsewhere (the Content-Security-Policy would refuse it anyway). Tables are on (CommonMark + GFM tables).
"""

from __future__ import annotations

from functools import cache

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

#: A table column's alignment as a class (portal.css styles them): markdown-it writes it as an inline style, which the
#: Content-Security-Policy refuses (style-src 'self'), so a right-aligned column of numbers came out unaligned.
ALIGN_CLASSES = {"text-align:right": "num", "text-align:center": "centre", "text-align:left": ""}


def _alignment_as_class(state) -> None:
    for token in state.tokens:
        if token.type in ("th_open", "td_open") and token.attrs.get("style") is not None:
            css = ALIGN_CLASSES.get(str(token.attrs.pop("style")), "")
            if css:
                token.attrSet("class", css)


@cache
def _parser() -> MarkdownIt:
    parser = (
        MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
        .enable("table")
        .disable("image")
    )
    parser.core.ruler.push("alignment_as_class", _alignment_as_class)
    return parser


def guideline_html(text: str) -> SafeString:
    """The guideline ``text`` (markdown) as HTML that is safe to put in a page."""
    return mark_safe(_parser().render(text or ""))  # noqa: S308 - markdown-it escapes all raw HTML (html=False)
