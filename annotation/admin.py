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
