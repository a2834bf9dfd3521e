"""Release API: list, freeze (POST), read. There is no update or delete endpoint: releases are immutable."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Release
from annotation.serializers.releases import FreezeRequestSerializer, ReleaseSerializer
from annotation.services.releases import release_freeze, release_get
from portal.roles import Role


class ReleaseListApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=ReleaseSerializer(many=True))
    def get(self, request):
        return Response(ReleaseSerializer(Release.objects.all(), many=True).data)

    @extend_schema(request=FreezeRequestSerializer, responses={201: ReleaseSerializer})
    def post(self, request):
        data = FreezeRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        release = release_freeze(user=request.user, **data.validated_data)
        return Response(ReleaseSerializer(release).data, status=status.HTTP_201_CREATED)


class ReleaseDetailApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=ReleaseSerializer)
    def get(self, request, label):
        return Response(ReleaseSerializer(release_get(label)).data)
