"""Request input the portal refuses before any view code runs: NUL characters (PostgreSQL text and jsonb cannot
hold them: a DataError, a 500) and unpaired UTF-16 surrogates (not encodable as UTF-8: a crash when stored or
echoed back in an error message); in JSON also numbers too large to be finite (``1e309``). ``refused_character`` is the one rule; the JSON parser applies it to API
bodies (a 400 naming the field) and ``portal.middleware.RefuseUnstorableTextMiddleware`` to URLs, query strings
and form fields."""

from __future__ import annotations

import math
import re

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

_REFUSED = re.compile("[\x00\ud800-\udfff]")


def refused_character(text: str) -> str | None:
    """Why ``text`` cannot be accepted, or None."""
    found = _REFUSED.search(text)
    if found is None:
        return None
    return "NUL characters are not allowed" if found.group() == "\x00" else "unpaired surrogates are not allowed"


def printable(text: str) -> str:
    """``text`` safe to put in an error message: the refused characters written as escapes."""
    return text.encode("ascii", "backslashreplace").decode("ascii")


def _find_refused(value, path: str = "") -> tuple[str, str] | None:
    if isinstance(value, float) and not math.isfinite(value):  # 1e309 parses as infinity
        return (path or "(body)", "numbers must be finite")
    if isinstance(value, str):
        reason = refused_character(value)
        return (path or "(body)", reason) if reason else None
    if isinstance(value, dict):
        for key, item in value.items():
            reason = refused_character(str(key))
            if reason:
                return (f"{path}.{key!r}" if path else repr(key), reason)
            found = _find_refused(item, f"{path}.{key}" if path else str(key))
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_refused(item, f"{path}[{index}]")
            if found:
                return found
    return None


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        found = _find_refused(data)
        if found:
            where, reason = found
            raise ParseError(f"field '{printable(where)}': {reason}")
        return data
