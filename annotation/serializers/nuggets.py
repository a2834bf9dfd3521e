"""Serializers of the nugget API: shapes only; the list rules are ``annotation.nugget_workflow``'s."""

from __future__ import annotations

from rest_framework import serializers

from annotation.serializers.review import ReviewItemSerializer


class NuggetSerializer(serializers.Serializer):
    id = serializers.CharField(max_length=50, required=False, allow_blank=True, default="")
    text = serializers.CharField(max_length=5000, trim_whitespace=False, allow_blank=True)
    importance = serializers.CharField(max_length=20)


class NuggetSetSerializer(serializers.Serializer):
    item_uid = serializers.CharField(source="item.uid", read_only=True)
    version = serializers.IntegerField(read_only=True)
    status = serializers.CharField(read_only=True)
    origin = serializers.CharField(read_only=True)
    based_on = serializers.IntegerField(source="based_on.version", read_only=True, allow_null=True, default=None)
    note = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    nuggets = serializers.SerializerMethodField()

    def get_nuggets(self, obj) -> list[dict]:
        return [{"id": n.key, "text": n.text, "importance": n.importance} for n in obj.nuggets.all()]


class NuggetTaskSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    stage = serializers.CharField(read_only=True)
    expires_at = serializers.DateTimeField(read_only=True)
    item = ReviewItemSerializer(read_only=True)
    draft = NuggetSetSerializer(source="nugget_set", read_only=True, allow_null=True)


class NuggetNextRequestSerializer(serializers.Serializer):
    stage = serializers.ChoiceField(choices=["", "write", "validate"], required=False, default="")


class NuggetDraftRequestSerializer(serializers.Serializer):
    nuggets = NuggetSerializer(many=True, max_length=200)


class NuggetValidateRequestSerializer(serializers.Serializer):
    nuggets = NuggetSerializer(many=True, max_length=200, required=False, allow_null=True, default=None)
    note = serializers.CharField(max_length=5000, required=False, allow_blank=True, default="")


class NuggetAdjudicateRequestSerializer(serializers.Serializer):
    pick_version = serializers.IntegerField(min_value=1)
    note = serializers.CharField(max_length=5000)
    nuggets = NuggetSerializer(many=True, max_length=200, required=False, allow_null=True, default=None)


class NuggetImportRequestSerializer(serializers.Serializer):
    file = serializers.FileField()


class NuggetExportRequestSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["validated", "all"], required=False, default="validated")
