"""REST API of the judgement export: one table (judgements or disputes) per request, for organizers."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.views import APIView

from annotation.services.judgement_exports import DOWNLOAD_TABLES, DOWNLOAD_TYPES, FORMATS, judgements_download
from portal.downloads import attachment_header
from portal.roles import Role


class JudgementExportApi(APIView):
    """The same file as the vetting page's download, with the same file name and the same audit entry."""

    required_roles = (Role.ORGANIZER,)

    @extend_schema(
        parameters=[
            OpenApiParameter("table", str, enum=list(DOWNLOAD_TABLES), default="judgements"),
            OpenApiParameter("fmt", str, enum=list(FORMATS), default="csv", description="disputes: csv or parquet"),
            OpenApiParameter("identities", bool, default=False, description="e-mail addresses instead of pseudonyms"),
        ],
        # CSV and Parquet are files; the SHROOM format is a JSON list of items.
        responses={
            (200, content_type): OpenApiTypes.ANY if content_type == "application/json" else OpenApiTypes.BINARY
            for content_type in sorted(set(DOWNLOAD_TYPES.values()))
        },
    )
    def get(self, request):
        params = request.query_params
        data, name, content_type = judgements_download(
            table=params.get("table", "judgements"),
            fmt=params.get("fmt", "csv"),  # not "format": DRF reserves it for renderers
            identities=params.get("identities") in ("1", "true"),
            user=request.user,
        )
        response = HttpResponse(data, content_type=content_type)
        response["Content-Disposition"] = attachment_header(name)
        return response
