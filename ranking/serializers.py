"""API shapes. Ranker-facing serializers list their fields explicitly and carry slot letters and texts only."""

from __future__ import annotations

from rest_framework import serializers

from annotation.qa_types import QAType
from metrics.nuggets import IMPORTANCES
from portal.numbers import WholeNumberSerializerField
from ranking.models import DEFAULT_TAG_SCALE, OVERLAP_MAX, OVERLAP_MIN, ReferenceFlag, Study, System

# --- rankers ----------------------------------------------------------------------------------------------------


class BlindedQuestionSerializer(serializers.Serializer):
    qa_type = serializers.CharField()
    type_label = serializers.CharField()
    question = serializers.CharField()
    lang = serializers.CharField()
    options = serializers.ListField(child=serializers.CharField(), required=False)
    false_answer = serializers.CharField(required=False)
    shown_answer = serializers.CharField(required=False)
    reasoning = serializers.ListField(child=serializers.CharField(), required=False)
    passage = serializers.CharField(required=False, help_text="Only when the study shows the source passage.")


class BlindedAnswerSerializer(serializers.Serializer):
    slot = serializers.CharField()
    text = serializers.CharField()
    sentences = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Nugget studies: the answer's sentences; sentence marks refer to their positions (from 0).",
    )


class BlindedNuggetSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The nugget's id: the key of nugget_labels.")
    position = serializers.IntegerField()
    text = serializers.CharField()
    importance = serializers.ChoiceField(
        choices=list(IMPORTANCES), help_text="avoid: a claim the answer must NOT make."
    )


class RankerStudyFormSerializer(serializers.Serializer):
    name = serializers.CharField()
    guidelines = serializers.CharField()
    tag_scale = serializers.ListField(child=serializers.CharField())
    ties_allowed = serializers.BooleanField()
    ask_hallucination = serializers.BooleanField()
    ask_harm = serializers.BooleanField()
    show_passage = serializers.BooleanField()
    ask_ranking = serializers.BooleanField()
    ask_nuggets = serializers.BooleanField()
    ask_spans = serializers.BooleanField()
    spans_by_character = serializers.BooleanField(help_text="Span marks keep exactly the characters selected.")


class BlindedTaskSerializer(serializers.Serializer):
    task = serializers.UUIDField()
    status = serializers.CharField()
    lease_expires_at = serializers.DateTimeField()
    study = RankerStudyFormSerializer()
    question = BlindedQuestionSerializer()
    answers = BlindedAnswerSerializer(many=True)
    nuggets = BlindedNuggetSerializer(many=True, help_text="The item's facts to check each answer against.")
    identical = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Groups of answer letters whose texts are word for word the same: they may share a rank.",
    )
    ask_unblinding = serializers.BooleanField()


class RankerStudySerializer(serializers.Serializer):
    id = serializers.IntegerField(source="study.pk")
    name = serializers.CharField(source="study.name")
    guidelines = serializers.CharField(source="study.guidelines")
    questions = serializers.IntegerField()
    done = serializers.IntegerField()
    skipped = serializers.IntegerField(help_text="Questions you skipped; they come back after the others.")


class AnswerJudgementInSerializer(serializers.Serializer):
    rank = WholeNumberSerializerField(required=False, allow_null=True)
    tag = serializers.CharField(required=False, allow_blank=True)
    hallucination = serializers.BooleanField(required=False, allow_null=True)
    hallucination_kind = serializers.CharField(required=False, allow_blank=True)
    harm = serializers.BooleanField(required=False, allow_null=True)


class SubmitSerializer(serializers.Serializer):
    answers = serializers.DictField(
        child=AnswerJudgementInSerializer(),
        required=False,
        default=dict,
        help_text="Keyed by slot letter: A, B, … (studies that ask for a ranking).",
    )
    nugget_labels = serializers.DictField(
        child=serializers.DictField(child=serializers.CharField(allow_blank=True)),
        required=False,
        default=dict,
        help_text='Nugget studies: {slot letter: {nugget id: "support" | "partial" | "not_support"}}, every nugget '
        "for every answer.",
    )
    sentence_marks = serializers.DictField(
        child=serializers.DictField(child=serializers.CharField(allow_blank=True)),
        required=False,
        default=dict,
        help_text='Nugget studies: {slot letter: {sentence position (from 0): "wrong" | "unsupported"}}; '
        "unmarked sentences are fine.",
    )
    spans = serializers.DictField(
        child=serializers.ListField(child=serializers.DictField()),
        required=False,
        default=dict,
        help_text='Span studies: {slot letter: [{"start", "end", "kind": "intrinsic" | "extrinsic" | "other", '
        '"note"?}]} for every answer; start/end are character (code point) offsets into the answer text, end '
        "excluded; an empty list means the answer was read and has no hallucination.",
    )
    comment = serializers.CharField(required=False, allow_blank=True, default="")
    time_spent_ms = WholeNumberSerializerField(required=False, allow_null=True, min_value=0)
    idempotency_key = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    unblinding_guess = serializers.CharField(required=False, allow_blank=True, default="", max_length=2)


class SubmitResultSerializer(serializers.Serializer):
    task = serializers.UUIDField()
    status = serializers.CharField()
    submitted_at = serializers.DateTimeField()


# --- organizers ---------------------------------------------------------------------------------------------------


class SystemSerializer(serializers.ModelSerializer):
    n_outputs = serializers.IntegerField(read_only=True)

    class Meta:
        model = System
        fields = ["id", "name", "family", "parameter_count", "notes", "n_outputs"]
        read_only_fields = fields


class StudySerializer(serializers.ModelSerializer):
    systems = serializers.SlugRelatedField(slug_field="name", many=True, read_only=True)
    n_questions = serializers.IntegerField(read_only=True)
    release_id = serializers.IntegerField(read_only=True, allow_null=True)

    class Meta:
        model = Study
        fields = [
            "id",
            "name",
            "state",
            "release_id",
            "item_filter",
            "seed",
            "systems",
            "include_reference",
            "overlap",
            "ties_allowed",
            "tag_scale",
            "ask_ranking",
            "ask_nuggets",
            "ask_spans",
            "spans_by_character",
            "ask_hallucination",
            "ask_harm",
            "show_passage",
            "unblinding_rate",
            "guidelines",
            "lease_seconds",
            "excluded_items",
            "excluded_without_nuggets",
            "n_questions",
            "physician_sample",
            "created_at",
        ]
        read_only_fields = fields

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["physician_sample"] = data["physician_sample"] or None  # no design: null, not an empty object
        return data


class StudyQuestionSerializer(serializers.Serializer):
    """A study question as the estimates need it: whether physicians are asked for it and, under a designed sample,
    its chance of having been drawn (an estimate outside the portal weights each asked question by 1/chance)."""

    item_uid = serializers.CharField(source="item.uid")
    position = serializers.IntegerField()
    asked = serializers.BooleanField(source="physician_sampled")
    inclusion_probability = serializers.FloatField(allow_null=True)


class StudyCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    systems = serializers.ListField(child=serializers.CharField(), min_length=1, help_text="System names or ids.")
    qa_types = serializers.ListField(child=serializers.ChoiceField(choices=[t.value for t in QAType]), required=False)
    sample_size = WholeNumberSerializerField(required=False, allow_null=True, min_value=1)
    seed = WholeNumberSerializerField(required=False, default=0)
    release_id = WholeNumberSerializerField(required=False, allow_null=True)
    include_reference = serializers.BooleanField(required=False, default=True)
    overlap = serializers.IntegerField(required=False, default=3, min_value=OVERLAP_MIN, max_value=OVERLAP_MAX)
    ties_allowed = serializers.BooleanField(required=False, default=False)
    tag_scale = serializers.ListField(
        child=serializers.CharField(), required=False, default=lambda: list(DEFAULT_TAG_SCALE)
    )
    ask_hallucination = serializers.BooleanField(required=False, default=False)
    ask_harm = serializers.BooleanField(required=False, default=False)
    show_passage = serializers.BooleanField(required=False, default=False)
    unblinding_rate = serializers.FloatField(required=False, default=0.0, min_value=0.0, max_value=1.0)
    guidelines = serializers.CharField(required=False, allow_blank=True, default="")
    lease_seconds = WholeNumberSerializerField(required=False, default=1800, min_value=60)
    ask_ranking = serializers.BooleanField(required=False, default=True)
    ask_nuggets = serializers.BooleanField(
        required=False, default=False, help_text="Rankers check each answer against the item's validated nuggets."
    )
    ask_spans = serializers.BooleanField(
        required=False, default=False, help_text="Rankers mark the hallucinated words of each answer."
    )
    spans_by_character = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Span marks keep exactly the characters selected (by default a selection grows to whole words).",
    )


class StudyCreatedSerializer(serializers.Serializer):
    study = StudySerializer()
    included = serializers.IntegerField()
    excluded = serializers.IntegerField()
    excluded_without_nuggets = serializers.IntegerField()


class StudyStateSerializer(serializers.Serializer):
    state = serializers.ChoiceField(choices=Study.State.choices)


class ReferenceFlagSerializer(serializers.ModelSerializer):
    item_uid = serializers.CharField(source="question.item.uid", read_only=True)

    class Meta:
        model = ReferenceFlag
        fields = ["id", "item_uid", "reasons", "created_at", "sent_at", "dispute"]
        read_only_fields = fields
