"""API request parsing: JSON bodies go through the importers' JSON loader, so the same values are refused as in
uploaded files (NUL characters, lone surrogates, NaN / Infinity, integers of thousands of digits, deep nesting,
text over the length bound), with a 400 naming the field, before any view code runs."""

from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding

#: Request bodies nest a few levels (a ranking: body → judgements → one judgement); 16 leaves room for any form.
API_MAX_DEPTH = 16


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        # Imported here: DRF imports this class while portal.errors (which the importers use) is still loading.
        from annotation.importers.base import ImportProblem, Limits, parse_json

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
