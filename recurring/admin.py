from django.contrib import admin

from recurring.models import RecurringTemplate


@admin.register(RecurringTemplate)
class RecurringTemplateAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "interval", "time_zone", "next_run_at", "paused", "last_run_at", "refused_runs"]
    list_filter = ["interval", "paused"]
    search_fields = ["name", "id", "user__email"]
    raw_id_fields = ["user", "address_book_entry"]
    # The schedule is moved by the runs and by pause/resume through the API; read-only here.
    readonly_fields = [
        "id",
        "user",
        "name",
        "interval",
        "time_zone",
        "first_run_at",
        "draft",
        "address_book_entry",
        "paused",
        "next_run_index",
        "next_run_at",
        "claimed_until",
        "last_run_at",
        "last_draft_id",
        "last_refusal",
        "refused_runs",
        "skipped_runs",
        "created_at",
    ]

    def has_add_permission(self, request) -> bool:
        return False
