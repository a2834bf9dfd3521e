"""Serializers of the analytics API (reports and scoring runs)."""

from __future__ import annotations

from rest_framework import serializers

from analytics.models import Report, ScoringRun
from annotation.models import Release
from portal.numbers import WholeNumberSerializerField
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
    seed = WholeNumberSerializerField(default=0)
