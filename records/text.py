"""The rules for users' text (pure).

How a file that is not UTF-8 is refused (:func:`utf8_text`): with the line and the byte where it stops being UTF-8,
so a person can find it. And the one rule for text PostgreSQL cannot store: NUL characters (text and jsonb cannot
hold them: a DataError, a 500) and unpaired UTF-16 surrogates (not encodable as UTF-8: a crash when stored or echoed
back in an error message). The kernel's request parsers (``portal.parsers``), the strict JSONL reader
(:mod:`records.jsonl`) and the rules of user-written fields (e.g. a hallucination span's note) all ask it."""

from __future__ import annotations

import re

_REFUSED = re.compile("[\x00\ud800-\udfff]")


def refused_character(text: str) -> str | None:
    """Why ``text`` cannot be stored (it holds a NUL character or an unpaired surrogate), or None."""
    found = _REFUSED.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "contains a NUL character (\\u0000), which cannot be stored"
    return f"contains a lone surrogate (\\u{ord(found.group()):04x}), which is not valid Unicode text"


class NotUtf8(ValueError):
    """Bytes that are not UTF-8 text: ``line`` and ``byte`` (within the line) of the first bad byte, both from 1."""

    def __init__(self, line: int, byte: int):
        self.line, self.byte = line, byte
        super().__init__(f"not UTF-8 text (byte {byte})")


def utf8_text(raw: bytes, *, byte_order_mark: bool = True) -> str:
    """``raw`` decoded as UTF-8, a leading byte-order mark dropped (a spreadsheet's "CSV UTF-8" starts with one);
    raises :class:`NotUtf8` naming where it stops being UTF-8. ``byte_order_mark=False`` for a line after the first,
    where the mark is a character of the text."""
    try:
        return raw.decode("utf-8-sig" if byte_order_mark else "utf-8")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        raise NotUtf8(line=raw.count(b"\n", 0, exc.start) + 1, byte=exc.start - line_start + 1) from None
