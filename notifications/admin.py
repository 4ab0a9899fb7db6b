from django.contrib import admin

from notifications.kinds import KINDS
from notifications.models import EmailNotification, NotificationPreference


@admin.register(NotificationPreference)
class NotificationPreferenceAdmin(admin.ModelAdmin):
    list_display = ["user", "email_enabled", "updated_at"]
    list_filter = ["email_enabled"]
    search_fields = ["user__email"]
    raw_id_fields = ["user"]
    readonly_fields = ["updated_at"]


@admin.register(EmailNotification)
class EmailNotificationAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "to", "status", "attempt_count", "sent_at", "created_at"]
    list_filter = ["kind", "status", "created_at"]
    search_fields = ["id", "to", "user__email"]
    fields = readonly_fields = (
        "id",
        "user",
        "to",
        "kind",
        "shown_context",
        "dedup_key",
        "status",
        "attempt_count",
        "next_attempt_at",
        "claimed_at",
        "sent_at",
        "last_error",
        "created_at",
    )

    @admin.display(description="context")
    def shown_context(self, obj: EmailNotification):
        kind = KINDS.get(obj.kind)
        return "(holds a one-time code; not shown)" if kind and kind.secret else obj.context

    def has_add_permission(self, request) -> bool:
        return False
