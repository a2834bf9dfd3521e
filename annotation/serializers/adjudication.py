"""Serializers of the adjudication API: the queue, the item with its reviews compared (un-blinded: only for people
not conflicted on the item), the decision."""

from __future__ import annotations

from rest_framework import serializers

from annotation.models import Adjudication, QAItem, Review
from annotation.serializers.disputes import DisputeSerializer, FeedbackSerializer
from annotation.serializers.review import ReviewItemSerializer
from annotation.workflow import RELEVANCE_MAX, RELEVANCE_MIN, Verdict


class FullReviewSerializer(serializers.ModelSerializer):
    """Un-blinded: adjudicators and organizers only."""

    reviewer = serializers.CharField(source="reviewer.email", read_only=True)
    stage = serializers.CharField(read_only=True)
    lease_expires_at = serializers.DateTimeField(
        source="assignment.expires_at",
        read_only=True,
        help_text="End of the reviewer's hold; a created_at after it marks a late review (accepted because nobody "
        "else had taken the item).",
    )

    class Meta:
        model = Review
        fields = [
            "id",
            "stage",
            "reviewer",
            "verdict",
            "relevance",
            "comment",
            "server_seconds",
            "active_seconds",
            "created_at",
            "lease_expires_at",
            "superseded_at",
        ]
        read_only_fields = fields


class AdjudicationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Adjudication
        fields = ["id", "verdict", "relevance", "reason", "created_at"]
        read_only_fields = ["id", "created_at"]


class AdjudicationRequestSerializer(serializers.Serializer):
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    relevance = serializers.IntegerField(min_value=RELEVANCE_MIN, max_value=RELEVANCE_MAX)
    reason = serializers.CharField()
    dispute_outcome = serializers.ChoiceField(choices=["upheld", "rejected"], default="upheld")


class AdjudicationQueueItemSerializer(serializers.ModelSerializer):
    open_disputes = serializers.IntegerField(read_only=True)
    open_feedback = serializers.IntegerField(read_only=True)
    status = serializers.CharField(read_only=True, help_text="in_adjudication or held")

    class Meta:
        model = QAItem
        fields = ["uid", "qa_type", "status", "open_disputes", "open_feedback"]
        read_only_fields = fields


class AdjudicationItemSerializer(serializers.Serializer):
    item = ReviewItemSerializer()
    status = serializers.CharField()
    reviews = FullReviewSerializer(many=True)
    disputes = DisputeSerializer(many=True)
    feedback = FeedbackSerializer(many=True)
    adjudications = AdjudicationSerializer(many=True)


class ItemFinalSerializer(serializers.ModelSerializer):
    status = serializers.CharField(read_only=True, help_text="verified or rejected")

    class Meta:
        model = QAItem
        fields = ["uid", "status", "final_verdict", "final_relevance", "final_source", "finalized_at"]
        read_only_fields = fields
