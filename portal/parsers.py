"""Request input the portal refuses before any view code runs.

``refused_character`` (:mod:`records.text`) is the one rule for text PostgreSQL cannot store: NUL characters and
unpaired UTF-16 surrogates. ``portal.middleware.RefuseUnstorableTextMiddleware`` applies it to URLs, query strings
and form fields; the importers' loader applies it to every text value of an uploaded file and of an API JSON body,
which the JSON parser below reads through that loader, so the same values are refused as in uploaded files (also
NaN / Infinity, numbers too large for a float such as ``1e400``, integers of thousands of digits, a key given twice
in one object, deep nesting, text over the length bound), with a 400 naming the field.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding

from portal.importing import ImportProblem, Limits, parse_json
from records.text import refused_character

__all__ = ["API_MAX_DEPTH", "StrictJSONParser", "json_body", "printable", "refused_character"]

#: Request bodies nest a few levels (a ranking: body → judgements → one judgement); 16 leaves room for any form.
API_MAX_DEPTH = 16


def printable(text: str) -> str:
    """``text`` safe to put in an error message: the refused characters written as escapes."""
    return text.encode("ascii", "backslashreplace").decode("ascii")


def json_body(raw: bytes, encoding: str = "utf-8", display: str = "request body"):
    """A request's JSON body read by the importers' loader with the API's limits: NaN / Infinity, ``1e400``, huge
    integers, repeated keys, deep nesting, overlong text, NUL characters and lone surrogates are refused (``ImportProblem``, naming the field), so
    nothing a client sends can reach the database as a value it cannot store. ``UnicodeDecodeError`` for a body that
    is not ``encoding`` text."""
    limits = Limits(max_depth=API_MAX_DEPTH, max_text_chars=settings.PORTAL_UPLOAD_MAX_TEXT_CHARS)
    return parse_json(raw.decode(encoding), limits, display, records=False)


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = get_encoding(parser_context or {})
        try:
            return json_body(stream.read() if stream is not None else b"", encoding)
        except UnicodeDecodeError as exc:
            raise ParseError(f"JSON parse error - the body is not {encoding} text") from exc
        except ImportProblem as exc:
            raise ParseError(str(exc)) from exc
