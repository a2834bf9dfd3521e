from django.contrib import admin

from ranking.models import RankingTask, ReferenceFlag, Study, System, SystemOutput


@admin.register(System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ["name", "family", "parameter_count", "is_reference"]
    search_fields = ["name", "family"]


@admin.register(SystemOutput)
class SystemOutputAdmin(admin.ModelAdmin):
    list_display = ["system", "item", "imported_at"]
    list_filter = ["system"]
    raw_id_fields = ["item"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "state", "overlap", "created_at"]
    filter_horizontal = ["systems"]


@admin.register(RankingTask)
class RankingTaskAdmin(admin.ModelAdmin):
    list_display = ["id", "study", "ranker", "status", "submitted_at"]
    list_filter = ["status", "study"]
    raw_id_fields = ["question", "ranker"]

    def get_queryset(self, request):
        # A staff member who also ranks must not read the stored order (answer ids, created in system-name order)
        # of a task they are still working on.
        own_open = RankingTask.objects.filter(ranker=request.user.pk, status=RankingTask.Status.LEASED)
        return super().get_queryset(request).exclude(pk__in=own_open.values("pk"))


@admin.register(ReferenceFlag)
class ReferenceFlagAdmin(admin.ModelAdmin):
    list_display = ["question", "created_at", "sent_at", "dispute"]
