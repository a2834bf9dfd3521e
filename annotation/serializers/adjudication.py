"""Serializers of the adjudication API: the queue, the item with its reviews compared (un-blinded: only for people
not conflicted on the item), the decision."""

from __future__ import annotations

from rest_framework import serializers

from annotation.models import Adjudication, Dispute, QAItem, Review
from annotation.serializers.disputes import DisputeSerializer, FeedbackSerializer
from annotation.serializers.review import ReviewItemSerializer
from annotation.workflow import RELEVANCE_MAX, RELEVANCE_MIN, Verdict

DISPUTE_OUTCOMES = [Dispute.Status.UPHELD.value, Dispute.Status.REJECTED.value]


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
    dispute_outcomes = serializers.DictField(
        child=serializers.ChoiceField(choices=DISPUTE_OUTCOMES),
        required=False,
        help_text='The outcome of an open dispute by its id ({"12": "rejected"}), needed only where the verdict '
        "does not settle it (each dispute's outcome_by_verdict says which verdict gives which outcome; null: you "
        "choose). A choice that contradicts the verdict is refused (400).",
    )
    dispute_outcome = serializers.ChoiceField(
        choices=DISPUTE_OUTCOMES,
        required=False,
        help_text="One outcome for every open dispute, checked like dispute_outcomes. Leave both out to let the "
        "verdict decide.",
    )

    def validate_dispute_outcomes(self, value: dict) -> dict[int, str]:
        """Keys are dispute ids (JSON object keys are strings): whole numbers only."""
        outcomes = {}
        for key, outcome in value.items():
            text = str(key)
            if not (text.isascii() and text.isdigit() and len(text) <= 18):  # a primary key fits in 18 digits
                raise serializers.ValidationError(f"“{text[:40]}” is not a dispute id (a whole number)")
            outcomes[int(text)] = outcome
        return outcomes


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
