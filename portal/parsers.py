"""API request parsing: refuse NUL characters anywhere in JSON bodies (PostgreSQL text and jsonb cannot hold
them), with a 400 naming the field, before any view code runs."""

from __future__ import annotations

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def _find_nul(value, path: str = "") -> str | None:
    if isinstance(value, str):
        return path or "(body)" if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            if "\x00" in str(key):
                return f"{path}.{key!r}" if path else repr(key)
            found = _find_nul(item, f"{path}.{key}" if path else str(key))
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_nul(item, f"{path}[{index}]")
            if found:
                return found
    return None


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        where = _find_nul(data)
        if where:
            raise ParseError(f"field '{where}': NUL characters are not allowed")
        return data
