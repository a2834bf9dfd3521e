"""Serializers of the release API."""

from __future__ import annotations

from rest_framework import serializers

from annotation.models import Release
from annotation.services.release_rules import RuleError, SelectionRule
from annotation.services.releases import RELEASE_NAME_MAX, RELEASE_NAME_RULE, release_name_problem


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
            "with_nuggets",
            "report",
            "created_at",
        ]
        read_only_fields = fields


class FreezeRequestSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=RELEASE_NAME_MAX, trim_whitespace=False, help_text=RELEASE_NAME_RULE)
    note = serializers.CharField(required=False, allow_blank=True, default="")
    rule = serializers.DictField(required=False, default=dict)
    with_nuggets = serializers.BooleanField(required=False, default=False)

    def validate_name(self, value: str) -> str:
        if problem := release_name_problem(value):
            raise serializers.ValidationError(problem)
        return value

    def validate_rule(self, value: dict) -> dict:
        # The rule's own class validates it, as for the releases page and the command line.
        try:
            return SelectionRule.from_dict(value).as_dict()
        except RuleError as exc:
            raise serializers.ValidationError({exc.field: [exc.reason]}) from exc
