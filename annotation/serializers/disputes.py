"""Serializers of the dispute API: filing disputes and feedback notes, the dispute thread."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models import Dispute, DisputeComment, FeedbackNote
from annotation.services.disputes import dispute_outcomes_by_verdict
from portal.numbers import WholeNumberSerializerField


class DisputeRequestSerializer(serializers.Serializer):
    idempotency_key = serializers.UUIDField()
    category = serializers.ChoiceField(choices=Dispute.Category.choices)
    text = serializers.CharField()
    quote_text = serializers.CharField(required=False, allow_blank=True, default="")
    quote_start = WholeNumberSerializerField(required=False, allow_null=True, min_value=0, default=None)
    quote_end = WholeNumberSerializerField(required=False, allow_null=True, min_value=0, default=None)


class FeedbackRequestSerializer(serializers.Serializer):
    idempotency_key = serializers.UUIDField()
    text = serializers.CharField()


class DisputeCommentSerializer(serializers.ModelSerializer):
    author = serializers.StringRelatedField()

    class Meta:
        model = DisputeComment
        fields = ["id", "author", "text", "created_at"]
        read_only_fields = ["id", "author", "created_at"]


class DisputeSerializer(serializers.ModelSerializer):
    item = serializers.CharField(source="item.uid", read_only=True)
    comments = DisputeCommentSerializer(many=True, read_only=True)
    status = serializers.CharField(read_only=True, help_text="open, upheld or rejected")
    category = serializers.CharField(read_only=True, help_text="one of the dispute categories")
    outcome_by_verdict = serializers.SerializerMethodField(
        help_text="What deciding the item with each final verdict does to this dispute: upheld, rejected, or null "
        "where the adjudicator chooses (dispute_outcomes of the adjudication request)."
    )

    class Meta:
        model = Dispute
        fields = [
            "id",
            "item",
            "category",
            "text",
            "quote_text",
            "quote_start",
            "quote_end",
            "status",
            "outcome_by_verdict",
            "resolution_note",
            "created_at",
            "resolved_at",
            "comments",
        ]
        read_only_fields = fields

    @extend_schema_field(
        serializers.DictField(child=serializers.ChoiceField(choices=["upheld", "rejected"], allow_null=True))
    )
    def get_outcome_by_verdict(self, dispute: Dispute) -> dict[str, str | None]:
        return dispute_outcomes_by_verdict(dispute.category)


class FeedbackSerializer(serializers.ModelSerializer):
    item = serializers.CharField(source="item.uid", read_only=True)
    status = serializers.CharField(read_only=True, help_text="open or closed")

    class Meta:
        model = FeedbackNote
        fields = ["id", "item", "text", "status", "response", "created_at", "closed_at"]
        read_only_fields = fields


class NoteSerializer(serializers.Serializer):
    text = serializers.CharField(required=False, allow_blank=True, default="")
