"""REST API of the annotation app (organizer endpoints for items and imports)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import QAItem
from annotation.selectors.items import item_list
from annotation.serializers.items import ImportRequestSerializer, QAItemSerializer
from annotation.services.blinding import item_page_open
from annotation.services.imports import import_request
from portal.numbers import whole_number
from portal.roles import Role
from portal.serializers import JobSerializer
from portal.uploads import save_uploads


class ItemListApi(generics.ListAPIView):
    required_roles = (Role.ORGANIZER,)
    serializer_class = QAItemSerializer

    def get_queryset(self):
        params = self.request.query_params
        return item_list(
            qa_type=params.get("qa_type", ""),
            status=params.get("status", ""),
            batch=whole_number(params.get("batch")),
            q=params.get("q", ""),
        )


class ItemDetailApi(generics.RetrieveAPIView):
    """One item with its status and answer. Its status tells an organizer who also reviews how the other reviews of
    the item went: refused to one conflicted on it, and remembered (not given it to review afterwards)."""

    required_roles = (Role.ORGANIZER,)
    serializer_class = QAItemSerializer
    lookup_field = "uid"
    queryset = QAItem.objects.all()  # for the schema's path parameter; get_object reads the item itself

    def get_object(self):
        return item_page_open(user=self.request.user, uid=self.kwargs["uid"], where="item API")


class ImportCreateApi(APIView):
    """Upload items or passages; returns the job to poll. Nothing is imported unless every record is valid."""

    required_roles = (Role.ORGANIZER,)
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request=ImportRequestSerializer, responses={202: JobSerializer})
    def post(self, request):
        serializer = ImportRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        paths, displays = save_uploads(data["files"])
        job = import_request(
            kind=data["kind"],
            paths=paths,
            displays=displays,
            fmt=data["format"],
            batch_name=data.get("batch_name", ""),
            user=request.user,
        )
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)
