"""Request input the portal refuses before any view code runs.

``refused_character`` is the one rule for text PostgreSQL cannot store: NUL characters (text and jsonb cannot hold
them: a DataError, a 500) and unpaired UTF-16 surrogates (not encodable as UTF-8: a crash when stored or echoed
back in an error message). ``portal.middleware.RefuseUnstorableTextMiddleware`` applies it to URLs, query strings
and form fields; the importers' loader applies it to every text value of an uploaded file and of an API JSON body,
which the JSON parser below reads through that loader, so the same values are refused as in uploaded files (also
NaN / Infinity, integers of thousands of digits, deep nesting, text over the length bound), with a 400 naming the
field.
"""

from __future__ import annotations

import re

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding

#: Request bodies nest a few levels (a ranking: body → judgements → one judgement); 16 leaves room for any form.
API_MAX_DEPTH = 16
_REFUSED = re.compile("[\x00\ud800-\udfff]")


def refused_character(text: str) -> str | None:
    """Why ``text`` cannot be stored (it holds a NUL character or an unpaired surrogate), or None."""
    found = _REFUSED.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "contains a NUL character (\\u0000), which cannot be stored"
    return f"contains a lone surrogate (\\u{ord(found.group()):04x}), which is not valid Unicode text"


def printable(text: str) -> str:
    """``text`` safe to put in an error message: the refused characters written as escapes."""
    return text.encode("ascii", "backslashreplace").decode("ascii")


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        # Imported here: portal.importing imports this module (refused_character), and DRF imports this class while
        # portal.errors (which portal.importing uses) is still loading.
        from portal.importing import ImportProblem, Limits, parse_json

        encoding = get_encoding(parser_context or {})
        try:
            text = stream.read().decode(encoding) if stream is not None else ""
        except UnicodeDecodeError as exc:
            raise ParseError(f"JSON parse error - the body is not {encoding} text") from exc
        limits = Limits(max_depth=API_MAX_DEPTH, max_text_chars=settings.PORTAL_UPLOAD_MAX_TEXT_CHARS)
        try:
            return parse_json(text, limits, "request body", records=False)
        except ImportProblem as exc:
            raise ParseError(str(exc)) from exc
