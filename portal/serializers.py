"""Serializer pieces shared by every app's API: the representation of a background job (job endpoints and the job
page's JSON), and reading a request body through a serializer."""

from rest_framework import serializers

from portal.models import Job


class JobSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)
    uploads_delete_after = serializers.DateTimeField(read_only=True, allow_null=True)

    class Meta:
        model = Job
        fields = [
            "id",
            "kind",
            "status",
            "progress_done",
            "progress_total",
            "percent",
            "message",
            "error",
            "result",
            "attempts",
            "created_at",
            "started_at",
            "heartbeat_at",
            "finished_at",
            "uploads_delete_after",
            "uploads_deleted_at",
        ]
        read_only_fields = fields


def validated(serializer_class, request) -> dict:
    """The request body checked by ``serializer_class``; invalid input raises DRF's 400 naming the fields."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
