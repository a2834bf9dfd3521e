"""The HTTP response of a study export, for the page and the API alike: the same bytes under the same name."""

from __future__ import annotations

from collections.abc import Iterator

from django.http import HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase

from portal.downloads import attachment_header, download_name
from ranking.models import Study
from ranking.services.exports import CONTENT_TYPES, EXPORT_CONTENTS, EXTENSIONS, STREAMED_FORMATS


def study_export_name(study: Study, fmt: str, *, identities: bool = False, blind_systems: bool = False) -> str:
    """The study, what the file holds, whether rankers are named in it (never the same name as the pseudonymised
    file) or the systems blinded: "demo-study-rankings.csv", "demo-study-rankings-spans-identified.parquet"."""
    variants = [*(["identified"] if identities else []), *(["systems-blinded"] if blind_systems else [])]
    return download_name(study.name, EXPORT_CONTENTS[fmt], EXTENSIONS[fmt], variants=variants)


def export_response(chunks: Iterator[bytes], fmt: str, name: str) -> HttpResponseBase:
    """Streamed for the formats written a batch at a time as the download is sent (a large nugget study's million
    labels); the others are built whole, so they are sent whole, with their length. Saved as ``name``."""
    response: HttpResponseBase
    if fmt in STREAMED_FORMATS:
        response = StreamingHttpResponse(chunks, content_type=CONTENT_TYPES[fmt])
    else:
        response = HttpResponse(b"".join(chunks), content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = attachment_header(name)
    return response
