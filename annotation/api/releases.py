"""Release API: list, freeze (POST), read. There is no update or delete endpoint: releases are immutable."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Release
from annotation.services.releases import RuleError, SelectionRule, release_freeze, release_get
from portal.roles import Role


class ReleaseSerializer(serializers.ModelSerializer):
    label = serializers.CharField(read_only=True)

    class Meta:
        model = Release
        fields = [
            "label",
            "name",
            "version",
            "note",
            "rule",
            "item_count",
            "checksum",
            "manifests",
            "csv_cells",
            "report",
            "created_at",
        ]
        read_only_fields = fields


class FreezeRequestSerializer(serializers.Serializer):
    name = serializers.SlugField(max_length=100)
    note = serializers.CharField(required=False, allow_blank=True, default="")
    rule = serializers.DictField(required=False, default=dict)

    def validate_rule(self, value: dict) -> dict:
        # The rule's own class validates it, as for the releases page and the command line.
        try:
            return SelectionRule.from_dict(value).as_dict()
        except RuleError as exc:
            raise serializers.ValidationError({exc.field: [exc.reason]}) from exc


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
