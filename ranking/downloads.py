"""The HTTP response of a study export, for the page and the API alike."""

from __future__ import annotations

from collections.abc import Iterator

from django.http import HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase

from ranking.services.exports import CONTENT_TYPES, STREAMED_FORMATS


def export_response(chunks: Iterator[bytes], fmt: str) -> HttpResponseBase:
    """Streamed for the formats written a batch at a time as the download is sent (a large nugget study's million
    labels); the others are built whole, so they are sent whole, with their length."""
    if fmt in STREAMED_FORMATS:
        return StreamingHttpResponse(chunks, content_type=CONTENT_TYPES[fmt])
    return HttpResponse(b"".join(chunks), content_type=CONTENT_TYPES[fmt])
