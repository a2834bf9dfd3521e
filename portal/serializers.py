"""The API representation of a background job, shared by every app's job endpoints and the job page's JSON."""

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
