"""Analytics API: request reports and scoring runs (computed by jobs) and read their results."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from analytics.models import Report, ScoringRun
from analytics.services import report_request, scoring_request
from annotation.models import Release
from portal.roles import Role
from ranking.models import System


class ReportSerializer(serializers.ModelSerializer):
    job = serializers.UUIDField(source="job_id", read_only=True, allow_null=True)

    class Meta:
        model = Report
        fields = ["id", "kind", "params", "result", "job", "created_at", "finished_at"]
        read_only_fields = fields


class ReportRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=Report.Kind.choices)
    params = serializers.DictField(required=False, default=dict)


class ScoringRunSerializer(serializers.ModelSerializer):
    system = serializers.CharField(source="system.name", read_only=True)
    job = serializers.UUIDField(source="job_id", read_only=True, allow_null=True)

    class Meta:
        model = ScoringRun
        fields = [
            "id",
            "system",
            "release",
            "profile",
            "seed",
            "summary",
            "run_record",
            "n_items",
            "job",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields


class ScoringRequestSerializer(serializers.Serializer):
    system = serializers.SlugRelatedField(slug_field="name", queryset=System.objects.filter(is_reference=False))
    release = serializers.PrimaryKeyRelatedField(queryset=Release.objects.all(), required=False, allow_null=True)
    profile = serializers.ChoiceField(choices=["cliniqlink-2025", "paper"], default="cliniqlink-2025")
    seed = serializers.IntegerField(default=0)


class ReportCreateApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(request=ReportRequestSerializer, responses={202: ReportSerializer})
    def post(self, request):
        data = ReportRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report = report_request(user=request.user, **data.validated_data)
        report.refresh_from_db()
        return Response(ReportSerializer(report).data, status=status.HTTP_202_ACCEPTED)


class ReportDetailApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=ReportSerializer)
    def get(self, request, pk):
        return Response(ReportSerializer(get_object_or_404(Report, pk=pk)).data)


class ScoringRunCreateApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(request=ScoringRequestSerializer, responses={202: ScoringRunSerializer})
    def post(self, request):
        data = ScoringRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = scoring_request(user=request.user, **data.validated_data)
        run.refresh_from_db()
        return Response(ScoringRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class ScoringRunDetailApi(APIView):
    required_roles = (Role.ORGANIZER,)

    @extend_schema(responses=ScoringRunSerializer)
    def get(self, request, pk):
        return Response(ScoringRunSerializer(get_object_or_404(ScoringRun, pk=pk)).data)
