"""Admin pages of the annotation app.

Frozen releases, guideline versions, reviews, gold answers and adjudications are read-only here: they change only
through the services (which number, check and audit them), and the database refuses changes to frozen releases too.
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
    GuidelineVersion,
    ImportBatch,
    QAItem,
    Release,
    ReleaseItem,
    Review,
    ReviewRevision,
    SourcePassage,
    VettingConfig,
)
from annotation.selectors.review import conflict_of_interest_q
from annotation.workflow import ItemStatus
from portal.roles import can_review


@admin.register(QAItem)
class QAItemAdmin(admin.ModelAdmin):
    list_display = ["uid", "qa_type", "status", "batch"]
    list_filter = ["qa_type", "status", "benchmark"]
    search_fields = ["uid", "question", "paragraph_id"]
    raw_id_fields = ["passage", "batch"]


@admin.register(SourcePassage)
class SourcePassageAdmin(admin.ModelAdmin):
    list_display = ["paragraph_id", "isbn", "page"]
    search_fields = ["paragraph_id", "text"]


@admin.register(ImportBatch)
class ImportBatchAdmin(admin.ModelAdmin):
    list_display = ["name", "fmt", "items_created", "items_existing", "paused", "priority", "created_at"]
    list_editable = ["paused", "priority"]


class ReadOnlyAdmin(admin.ModelAdmin):
    """Frozen data: viewable, never changed or deleted from the admin (the database refuses it too)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Release)
class ReleaseAdmin(ReadOnlyAdmin):
    list_display = ["name", "version", "item_count", "checksum", "created_at"]


@admin.register(ReleaseItem)
class ReleaseItemAdmin(ReadOnlyAdmin):
    list_display = ["release", "position", "uid", "qa_type", "final_verdict", "final_relevance"]
    list_filter = ["release", "qa_type"]


# --- reviewer guidelines: append-only; new versions are written on /organize/guidelines/ ---------------------------


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


# --- review, disputes, adjudication, vetting -------------------------------------------------------------------


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class _Blinded(_ReadOnly):
    """Rows about items the signed-in person was given to review stay out of their lists (conflict of interest).

    A staff member who also reviews sees the judgements of final items only (verified or rejected: no final item
    goes back to review). The admin's lists show many items at once and record nothing, so a judgement read here of
    an item still in review or adjudication (which can be sent back to review) would escape the blinding rule
    (``annotation.selectors.blinding``); the portal's own pages record what they show."""

    item_path = "item__"

    def get_queryset(self, request):
        rows = super().get_queryset(request).exclude(conflict_of_interest_q(request.user, self.item_path))
        if can_review(request.user):
            rows = rows.filter(**{f"{self.item_path}status__in": [ItemStatus.VERIFIED, ItemStatus.REJECTED]})
        return rows


@admin.register(VettingConfig)
class VettingConfigAdmin(_ReadOnly):
    list_display = ["seed", "second_share", "relevance_gap", "gold_rate", "gold_min_accuracy", "updated_at"]


@admin.register(Assignment)
class AssignmentAdmin(_Blinded):
    list_display = ["item", "reviewer", "stage", "status", "created_at", "expires_at"]
    list_filter = ["stage", "status"]
    raw_id_fields = ["item", "reviewer"]


class ReviewRevisionInline(admin.TabularInline):
    """What the review said before its author changed it (oldest first; the review row is the newest version)."""

    model = ReviewRevision
    fields = ["version", "verdict", "relevance", "comment", "stored_at", "replaced_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Review)
class ReviewAdmin(_Blinded):
    list_display = ["item", "reviewer", "stage", "verdict", "relevance", "created_at", "edited_at"]
    list_filter = ["stage", "verdict", "relevance"]
    inlines = [ReviewRevisionInline]


@admin.register(GoldItem)
class GoldItemAdmin(_Blinded):
    list_display = ["item", "expected_verdict", "planted_error", "active", "created_at"]


@admin.register(GoldAnswer)
class GoldAnswerAdmin(_Blinded):
    item_path = "gold__item__"
    list_display = ["gold", "reviewer", "verdict", "is_correct", "created_at"]


class DisputeCommentInline(admin.TabularInline):
    model = DisputeComment
    extra = 0
    can_delete = False
    readonly_fields = ["author", "text", "created_at"]


@admin.register(Dispute)
class DisputeAdmin(_Blinded):
    list_display = ["pk", "item", "raised_by", "category", "status", "created_at", "resolved_at"]
    list_filter = ["status", "category"]
    inlines = [DisputeCommentInline]


@admin.register(FeedbackNote)
class FeedbackNoteAdmin(_Blinded):
    list_display = ["pk", "item", "author", "status", "created_at", "closed_at"]
    list_filter = ["status"]


@admin.register(Adjudication)
class AdjudicationAdmin(_Blinded):
    list_display = ["item", "adjudicator", "verdict", "relevance", "created_at"]
