"""REST API of nugget work, mirroring the pages: the next item, a draft, a validation, settling a disagreement,
putting an item back; and for organizers, import and export. The same services, the same rules."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.forms.nuggets import MAX_IMPORT_BYTES
from annotation.models import QAItem
from annotation.nugget_workflow import NUGGET_EXPERT_ROLES
from annotation.selectors.nuggets import disputed_items, open_versions
from annotation.serializers.nuggets import (
    NuggetAdjudicateRequestSerializer,
    NuggetDraftRequestSerializer,
    NuggetExportRequestSerializer,
    NuggetImportRequestSerializer,
    NuggetNextRequestSerializer,
    NuggetSetSerializer,
    NuggetTaskSerializer,
    NuggetValidateRequestSerializer,
)
from annotation.services.nugget_files import NuggetImportRefused, nuggets_export, nuggets_import
from annotation.services.nugget_versions import NuggetListInvalid
from annotation.services.nuggets import (
    nugget_adjudicate,
    nugget_next,
    nugget_submit_draft,
    nugget_task_release,
    nugget_validate,
)
from portal.downloads import attachment_header, download_name
from portal.errors import NotFound
from portal.roles import Role
from portal.serializers import validated

EXPERTS = tuple(sorted(NUGGET_EXPERT_ROLES))


def _list_refused(exc: NuggetListInvalid) -> Response:
    """400 naming each problem with the nugget (1-based) and field it is about."""
    problems = [{"nugget": p.entry, "field": p.field or None, "detail": p.detail} for p in exc.problems]
    return Response({"detail": str(exc), "code": exc.code, "problems": problems}, status=400)


class NuggetNextApi(APIView):
    """Take the next item to validate or write nuggets for (or get the current lease back). 204: nothing waits."""

    required_roles = EXPERTS

    @extend_schema(request=NuggetNextRequestSerializer, responses={200: NuggetTaskSerializer, 204: OpenApiResponse()})
    def post(self, request):
        data = validated(NuggetNextRequestSerializer, request)
        task = nugget_next(person=request.user, stage=data["stage"])
        if task is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(NuggetTaskSerializer(task).data)


class NuggetDraftApi(APIView):
    """Send the nuggets written on a writing lease (they become a draft for someone else to validate)."""

    required_roles = EXPERTS

    @extend_schema(request=NuggetDraftRequestSerializer, responses={201: NuggetSetSerializer})
    def post(self, request, pk):
        data = validated(NuggetDraftRequestSerializer, request)
        try:
            nugget_set = nugget_submit_draft(task_id=pk, person=request.user, nuggets=data["nuggets"])
        except NuggetListInvalid as exc:
            return _list_refused(exc)
        return Response(NuggetSetSerializer(nugget_set).data, status=status.HTTP_201_CREATED)


class NuggetValidateApi(APIView):
    """Decide on the draft of a validating lease: no ``nuggets`` (or the same list) accepts it; a changed list
    becomes a second version and both go to an adjudicator."""

    required_roles = EXPERTS

    @extend_schema(request=NuggetValidateRequestSerializer, responses={200: NuggetSetSerializer})
    def post(self, request, pk):
        data = validated(NuggetValidateRequestSerializer, request)
        try:
            nugget_set = nugget_validate(task_id=pk, person=request.user, nuggets=data["nuggets"], note=data["note"])
        except NuggetListInvalid as exc:
            return _list_refused(exc)
        return Response(NuggetSetSerializer(nugget_set).data)


class NuggetTaskReleaseApi(APIView):
    """Put the leased item back for someone else."""

    required_roles = EXPERTS

    @extend_schema(request=None, responses={204: OpenApiResponse()})
    def post(self, request, pk):
        nugget_task_release(task_id=pk, person=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class NuggetDisputeListApi(APIView):
    """The nugget disagreements waiting for an adjudicator, with both versions."""

    required_roles = (Role.ADJUDICATOR,)

    @extend_schema(responses=NuggetSetSerializer(many=True))
    def get(self, request):
        sets = [s for item in disputed_items()[:200] for s in open_versions(item)]
        return Response(NuggetSetSerializer(sets, many=True).data)


class NuggetAdjudicateApi(APIView):
    """Settle a disagreement: keep ``pick_version``, or send ``nuggets`` (based on it) as the final list."""

    required_roles = (Role.ADJUDICATOR,)

    @extend_schema(request=NuggetAdjudicateRequestSerializer, responses={200: NuggetSetSerializer})
    def post(self, request, uid):
        data = validated(NuggetAdjudicateRequestSerializer, request)
        item = QAItem.objects.filter(uid=uid).first()
        if item is None:
            raise NotFound(f"No item with uid {uid}.")
        try:
            nugget_set = nugget_adjudicate(
                item=item,
                adjudicator=request.user,
                pick_version=data["pick_version"],
                note=data["note"],
                nuggets=data["nuggets"],
            )
        except NuggetListInvalid as exc:
            return _list_refused(exc)
        return Response(NuggetSetSerializer(nugget_set).data)


class NuggetImportApi(APIView):
    """Import a nugget JSONL file (multipart field ``file``) as drafts; all or nothing. 400 lists every problem
    with its file, line and field."""

    required_roles = (Role.ORGANIZER,)
    parser_classes = [MultiPartParser]

    @extend_schema(request={"multipart/form-data": NuggetImportRequestSerializer}, responses={201: OpenApiResponse()})
    def post(self, request):
        upload = validated(NuggetImportRequestSerializer, request)["file"]
        if upload.size > MAX_IMPORT_BYTES:
            return Response(
                {"detail": f"the file is {upload.size:,} bytes; the limit is {MAX_IMPORT_BYTES:,}", "code": "too_big"},
                status=400,
            )
        try:
            counts = nuggets_import(source=upload, name=upload.name, actor=request.user)
        except NuggetImportRefused as exc:
            errors = [{"file": e.file, "line": e.line, "field": e.field, "detail": e.detail} for e in exc.errors]
            return Response({"detail": str(exc), "code": exc.code, "errors": errors}, status=400)
        return Response(counts, status=status.HTTP_201_CREATED)


class NuggetExportApi(APIView):
    """The nugget lists as JSONL: ``?status=validated`` (default) or ``all`` (every item's latest version)."""

    required_roles = (Role.ORGANIZER,)

    @extend_schema(parameters=[NuggetExportRequestSerializer], responses={200: OpenApiResponse(description="JSONL")})
    def get(self, request):
        query = NuggetExportRequestSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        fmt = query.validated_data["status"]
        response = StreamingHttpResponse(
            (line.encode("utf-8") for line in nuggets_export(status=fmt, actor=request.user)),
            content_type="application/x-ndjson; charset=utf-8",
        )
        response["Content-Disposition"] = attachment_header(download_name("nuggets", fmt, "jsonl"))
        return response
