"""Admin pages of the reviewer guidelines (imported by annotation/admin.py): read-only, since versions are
append-only and new ones are written on /organize/guidelines/ (which numbers, checks and audits them)."""

from django.contrib import admin

from annotation.models import GuidelineVersion


@admin.register(GuidelineVersion)
class GuidelineVersionAdmin(admin.ModelAdmin):
    list_display = ("benchmark", "qa_type", "number", "author", "created_at", "change_note")
    list_filter = ("benchmark", "qa_type")
    readonly_fields = ("benchmark", "qa_type", "number", "text", "change_note", "author", "created_at")

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
