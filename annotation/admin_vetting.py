"""Admin pages of the vetting models (imported by annotation/admin.py).

Reviews, gold answers and adjudications are read-only here: they change only through the services, which audit.
"""

from django.contrib import admin

from annotation.models import (
    Adjudication,
    Assignment,
    Dispute,
    DisputeComment,
    FeedbackNote,
    GoldAnswer,
    GoldItem,
    Review,
    VettingConfig,
)


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(VettingConfig)
class VettingConfigAdmin(_ReadOnly):
    list_display = ["seed", "second_share", "relevance_gap", "gold_rate", "gold_min_accuracy", "updated_at"]


@admin.register(Assignment)
class AssignmentAdmin(_ReadOnly):
    list_display = ["item", "reviewer", "stage", "status", "created_at", "expires_at"]
    list_filter = ["stage", "status"]
    raw_id_fields = ["item", "reviewer"]


@admin.register(Review)
class ReviewAdmin(_ReadOnly):
    list_display = ["item", "reviewer", "stage", "verdict", "relevance", "created_at"]
    list_filter = ["stage", "verdict", "relevance"]


@admin.register(GoldItem)
class GoldItemAdmin(_ReadOnly):
    list_display = ["item", "expected_verdict", "planted_error", "active", "created_at"]


@admin.register(GoldAnswer)
class GoldAnswerAdmin(_ReadOnly):
    list_display = ["gold", "reviewer", "verdict", "is_correct", "created_at"]


class DisputeCommentInline(admin.TabularInline):
    model = DisputeComment
    extra = 0
    can_delete = False
    readonly_fields = ["author", "text", "created_at"]


@admin.register(Dispute)
class DisputeAdmin(_ReadOnly):
    list_display = ["pk", "item", "raised_by", "category", "status", "created_at", "resolved_at"]
    list_filter = ["status", "category"]
    inlines = [DisputeCommentInline]


@admin.register(FeedbackNote)
class FeedbackNoteAdmin(_ReadOnly):
    list_display = ["pk", "item", "author", "status", "created_at", "closed_at"]
    list_filter = ["status"]


@admin.register(Adjudication)
class AdjudicationAdmin(_ReadOnly):
    list_display = ["item", "adjudicator", "verdict", "relevance", "created_at"]
