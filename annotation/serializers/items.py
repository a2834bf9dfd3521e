from rest_framework import serializers

from annotation.models import QAItem


class QAItemSerializer(serializers.ModelSerializer):
    batch = serializers.IntegerField(source="batch_id", read_only=True)
    passage_text = serializers.CharField(source="passage.text", read_only=True, default=None, allow_null=True)

    class Meta:
        model = QAItem
        fields = [
            "uid",
            "qa_type",
            "benchmark",
            "status",
            "question",
            "answer",
            "answer_list",
            "options",
            "correct_answer",
            "false_answer",
            "incorrect_explanation",
            "reasoning",
            "incorrect_reasoning_step",
            "isbn",
            "page",
            "paragraph_id",
            "passage_text",
            "extra",
            "batch",
            "created_at",
        ]
        read_only_fields = fields


class ImportRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["items", "sources"], default="items")
    format = serializers.ChoiceField(choices=["cliniqlink", "promptcblue"], default="cliniqlink")
    batch_name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    files = serializers.ListField(child=serializers.FileField(), min_length=1)
