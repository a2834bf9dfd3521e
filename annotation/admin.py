from django.contrib import admin

from annotation.models import ImportBatch, QAItem, SourcePassage


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


from annotation.models import Release, ReleaseItem  # noqa: E402


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


from annotation import admin_guidelines, admin_vetting  # noqa: E402,F401 - register the guideline and vetting models
