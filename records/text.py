"""The one rule for text PostgreSQL cannot store (pure): NUL characters (text and jsonb cannot hold them: a
DataError, a 500) and unpaired UTF-16 surrogates (not encodable as UTF-8: a crash when stored or echoed back in an
error message). The kernel's request parsers (``portal.parsers``), the strict JSONL reader (:mod:`records.jsonl`)
and the rules of user-written fields (e.g. a hallucination span's note) all ask it."""

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
