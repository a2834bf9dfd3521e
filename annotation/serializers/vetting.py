"""Serializers of the organizers' vetting API: progress, settings, batches, gold items and reassigning an item."""

from __future__ import annotations

from rest_framework import serializers

from annotation.second_review import Policy
from annotation.workflow import (
    GOLD_MIN_ANSWERS_MAX,
    GOLD_MIN_ANSWERS_MIN,
    RELEVANCE_GAP_MAX,
    RELEVANCE_GAP_MIN,
    VERDICTS_TEXT,
)
from portal.numbers import WholeNumberSerializerField


class ReassignRequestSerializer(serializers.Serializer):
    reason = serializers.CharField(help_text="Why the item goes back to review (kept in the audit trail).")


class VettingConfigSerializer(serializers.Serializer):
    seed = serializers.CharField(max_length=64, required=False)
    second_share = serializers.FloatField(min_value=0, max_value=1, required=False)
    second_review_policy = serializers.ChoiceField(choices=Policy.choices, required=False)
    uniform_share = serializers.FloatField(min_value=0, max_value=1, required=False)
    adjudicate_above = serializers.FloatField(min_value=0, max_value=1, required=False)
    relevance_gap = serializers.IntegerField(min_value=RELEVANCE_GAP_MIN, max_value=RELEVANCE_GAP_MAX, required=False)
    gold_rate = serializers.FloatField(min_value=0, max_value=1, required=False)
    gold_min_accuracy = serializers.FloatField(min_value=0, max_value=1, required=False)
    gold_min_answers = serializers.IntegerField(
        min_value=GOLD_MIN_ANSWERS_MIN, max_value=GOLD_MIN_ANSWERS_MAX, required=False
    )


class BatchUpdateSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(read_only=True)
    paused = serializers.BooleanField(required=False)
    priority = WholeNumberSerializerField(required=False)


class GoldRequestSerializer(serializers.Serializer):
    uid = serializers.CharField()
    expected_verdict = serializers.CharField(help_text=VERDICTS_TEXT)
    planted_error = serializers.BooleanField(default=False)
    note = serializers.CharField(required=False, allow_blank=True, default="")


class GoldSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.CharField(source="item.uid")
    expected_verdict = serializers.CharField()
    planted_error = serializers.BooleanField()
    active = serializers.BooleanField()
