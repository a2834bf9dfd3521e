"""Serializers of the vetting API. Reviewer-facing ones carry nothing of other people's judgements, and nothing
that tells a gold item or a second review apart (no status, no stage, no batch)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models import Adjudication, Dispute, DisputeComment, FeedbackNote, QAItem, Review
from annotation.selectors.guidelines import guideline_for_assignment
from annotation.workflow import Verdict
from portal.numbers import WholeNumberSerializerField


# Plain serializers with the fields written out: "next" returns one of these hundreds of times a day per reviewer,
# and a ModelSerializer rebuilds its fields from the model on every instantiation (about a millisecond here).
class ReviewItemSerializer(serializers.Serializer):
    """What a reviewer sees of an item: its text and type-specific fields, the source excerpt; no status."""

    uid = serializers.CharField(read_only=True)
    qa_type = serializers.ChoiceField(choices=QAItem._meta.get_field("qa_type").choices, read_only=True)
    benchmark = serializers.CharField(read_only=True)
    question = serializers.CharField(read_only=True)
    answer = serializers.CharField(read_only=True)
    answer_list = serializers.JSONField(read_only=True)
    options = serializers.JSONField(read_only=True)
    correct_answer = serializers.CharField(read_only=True)
    false_answer = serializers.CharField(read_only=True)
    incorrect_explanation = serializers.CharField(read_only=True)
    reasoning = serializers.JSONField(read_only=True)
    incorrect_reasoning_step = serializers.JSONField(read_only=True)
    isbn = serializers.CharField(read_only=True)
    page = serializers.CharField(read_only=True)
    paragraph_id = serializers.CharField(read_only=True)
    passage_text = serializers.CharField(source="passage.text", read_only=True, default=None, allow_null=True)


class GuidelineSerializer(serializers.Serializer):
    """The guideline a lease is reviewed under (the version its review will record)."""

    number = serializers.IntegerField(read_only=True)
    text = serializers.CharField(read_only=True, help_text="Markdown, as the organizers wrote it.")
    created_at = serializers.DateTimeField(read_only=True)


class AssignmentSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    idempotency_key = serializers.UUIDField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    expires_at = serializers.DateTimeField(read_only=True)
    item = ReviewItemSerializer(read_only=True)
    guideline = serializers.SerializerMethodField(help_text="Null when none exists for the item's type.")

    @extend_schema_field(GuidelineSerializer(allow_null=True))
    def get_guideline(self, assignment) -> dict | None:
        version = guideline_for_assignment(assignment)
        return GuidelineSerializer(version).data if version else None


class NextRequestSerializer(serializers.Serializer):
    qa_type = serializers.CharField(required=False, allow_blank=True, default="")


class ReviewSubmitSerializer(serializers.Serializer):
    idempotency_key = serializers.UUIDField()
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    relevance = serializers.IntegerField(min_value=1, max_value=5)
    comment = serializers.CharField(required=False, allow_blank=True, default="")
    active_seconds = serializers.FloatField(required=False, allow_null=True, min_value=0, default=None)


class OwnReviewSerializer(serializers.Serializer):
    """The caller's own stored review (or gold answer: same shape, so the two cannot be told apart)."""

    assignment = serializers.IntegerField(source="assignment_id")
    verdict = serializers.CharField()
    relevance = serializers.IntegerField()
    comment = serializers.CharField()
    created_at = serializers.DateTimeField()


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
            "resolution_note",
            "created_at",
            "resolved_at",
            "comments",
        ]
        read_only_fields = fields


class FeedbackSerializer(serializers.ModelSerializer):
    item = serializers.CharField(source="item.uid", read_only=True)
    status = serializers.CharField(read_only=True, help_text="open or closed")

    class Meta:
        model = FeedbackNote
        fields = ["id", "item", "text", "status", "response", "created_at", "closed_at"]
        read_only_fields = fields


class NoteSerializer(serializers.Serializer):
    text = serializers.CharField(required=False, allow_blank=True, default="")


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
    relevance = serializers.IntegerField(min_value=1, max_value=5)
    reason = serializers.CharField()
    dispute_outcome = serializers.ChoiceField(choices=["upheld", "rejected"], default="upheld")


class ReassignRequestSerializer(serializers.Serializer):
    reason = serializers.CharField(help_text="Why the item goes back to review (kept in the audit trail).")


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


class VettingConfigSerializer(serializers.Serializer):
    seed = serializers.CharField(max_length=64, required=False)
    second_share = serializers.FloatField(min_value=0, max_value=1, required=False)
    relevance_gap = serializers.IntegerField(min_value=1, max_value=4, required=False)
    gold_rate = serializers.FloatField(min_value=0, max_value=1, required=False)
    gold_min_accuracy = serializers.FloatField(min_value=0, max_value=1, required=False)
    gold_min_answers = WholeNumberSerializerField(min_value=1, required=False)


class BatchUpdateSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(read_only=True)
    paused = serializers.BooleanField(required=False)
    priority = WholeNumberSerializerField(required=False)


class GoldRequestSerializer(serializers.Serializer):
    uid = serializers.CharField()
    expected_verdict = serializers.CharField(help_text="correct, incorrect or cannot_tell")
    planted_error = serializers.BooleanField(default=False)
    note = serializers.CharField(required=False, allow_blank=True, default="")


class GoldSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.CharField(source="item.uid")
    expected_verdict = serializers.CharField()
    planted_error = serializers.BooleanField()
    active = serializers.BooleanField()


class ProgressSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    last_24h = serializers.IntegerField()
    last_7d = serializers.IntegerField()
    median_seconds = serializers.FloatField(allow_null=True)
    disputes_open = serializers.IntegerField()
    disputes_resolved = serializers.IntegerField()
