"""Serializers of the review API (one reviewer's work on one item). They carry nothing of other people's
judgements, and nothing that tells a gold item or a second review apart (no status, no stage, no batch)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models import QAItem
from annotation.selectors.guidelines import guideline_for_assignment
from annotation.services.queue import GiveBackReason
from annotation.workflow import RELEVANCE_MAX, RELEVANCE_MIN, CannotTellReason, Verdict

# Plain serializers with the fields written out: "next" returns one of these hundreds of times a day per reviewer,
# and a ModelSerializer rebuilds its fields from the model on every instantiation. The two the review loop answers
# with also write their representation out (``to_representation``), because building the declared fields (DRF copies
# every field for every instance) cost more than the rest of the response; the declared fields stay the schema, and
# tests/annotation/test_review_api.py holds both to the same output.
_DATETIME = serializers.DateTimeField()


def _text(value) -> str | None:
    """A read-only CharField's representation."""
    return None if value is None else str(value)


def _datetime(value) -> str | None:
    return None if value is None else _DATETIME.to_representation(value)


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

    _TEXT = ("uid", "qa_type", "benchmark", "question", "answer", "correct_answer", "false_answer")
    _TEXT += ("incorrect_explanation", "isbn", "page", "paragraph_id")
    _JSON = ("answer_list", "options", "reasoning", "incorrect_reasoning_step")

    def to_representation(self, item) -> dict:
        data = {name: _text(getattr(item, name)) for name in self._TEXT}
        data.update((name, getattr(item, name)) for name in self._JSON)
        data["passage_text"] = _text(item.passage.text) if item.passage_id is not None else None
        return {name: data[name] for name in self._declared_fields}  # the declared order


class GuidelineSerializer(serializers.Serializer):
    """The guideline a lease is reviewed under (the version its review will record)."""

    number = serializers.IntegerField(read_only=True)
    text = serializers.CharField(read_only=True, help_text="Markdown, as the organizers wrote it.")
    created_at = serializers.DateTimeField(read_only=True)

    def to_representation(self, version) -> dict:
        return {"number": version.number, "text": _text(version.text), "created_at": _datetime(version.created_at)}


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

    def to_representation(self, assignment) -> dict:
        return {
            "id": assignment.pk,
            "idempotency_key": str(assignment.idempotency_key),
            "created_at": _datetime(assignment.created_at),
            "expires_at": _datetime(assignment.expires_at),
            "item": ReviewItemSerializer().to_representation(assignment.item),
            "guideline": self.get_guideline(assignment),
        }


class NextRequestSerializer(serializers.Serializer):
    qa_type = serializers.CharField(required=False, allow_blank=True, default="")


_REASON_HELP = (
    "Why you cannot tell: required with the verdict cannot_tell and refused (400, nothing stored) with any other. "
    "outside_field stores the review set aside: it judges nothing, the item goes to another reviewer and never back "
    "to you."
)


class ReviewSubmitSerializer(serializers.Serializer):
    idempotency_key = serializers.UUIDField()
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    cannot_tell_reason = serializers.ChoiceField(
        choices=CannotTellReason.choices, required=False, allow_blank=True, default="", help_text=_REASON_HELP
    )
    relevance = serializers.IntegerField(min_value=RELEVANCE_MIN, max_value=RELEVANCE_MAX)
    comment = serializers.CharField(required=False, allow_blank=True, default="")
    active_seconds = serializers.FloatField(required=False, allow_null=True, min_value=0, default=None)


class ReviewThenNextSerializer(ReviewSubmitSerializer, NextRequestSerializer):
    """The review of a lease and, for the next lease, the type filter of ``review/next/``."""


class OwnReviewSerializer(serializers.Serializer):
    """The caller's own stored review (or gold answer: same shape, so the two cannot be told apart)."""

    assignment = serializers.IntegerField(source="assignment_id")
    verdict = serializers.CharField()
    cannot_tell_reason = serializers.CharField(help_text='Why you could not tell; "" with any other verdict.')
    relevance = serializers.IntegerField()
    comment = serializers.CharField()
    created_at = serializers.DateTimeField()

    def to_representation(self, review) -> dict:
        return {
            "assignment": review.assignment_id,
            "verdict": _text(review.verdict),
            "cannot_tell_reason": _text(review.cannot_tell_reason),
            "relevance": review.relevance,
            "comment": _text(review.comment),
            "created_at": _datetime(review.created_at),
        }


class ReviewAlreadySentSerializer(serializers.Serializer):
    """409: a different review sent on a lease that already has one. Nothing was changed."""

    detail = serializers.CharField(help_text="What is stored, and that the review sent now was not saved.")
    code = serializers.CharField(help_text='"already_reviewed"')
    stored = OwnReviewSerializer(help_text="The review stored on the lease.")
    editable = serializers.BooleanField(help_text="Whether its author may still change the stored review.")
    change_url = serializers.CharField(allow_null=True, help_text="The page to change it on; null when not allowed.")


class ReviewAndNextSerializer(serializers.Serializer):
    """The stored review, and the next lease (``null`` when nothing is waiting)."""

    review = OwnReviewSerializer()
    next = AssignmentSerializer(allow_null=True)


class ProgressSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    last_24h = serializers.IntegerField()
    last_7d = serializers.IntegerField()
    median_seconds = serializers.FloatField(allow_null=True)
    disputes_open = serializers.IntegerField()
    disputes_resolved = serializers.IntegerField()


class GiveBackRequestSerializer(serializers.Serializer):
    reason = serializers.ChoiceField(choices=GiveBackReason.CHOICES)
    note = serializers.CharField(required=False, allow_blank=True, max_length=500, default="")


class GiveBackSerializer(serializers.Serializer):
    """The lease given back: it has ended, and the item will not be handed to this reviewer again."""

    id = serializers.IntegerField()
    status = serializers.CharField()
    finished_at = serializers.DateTimeField()
