from django.contrib import admin

from audit.models import AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """Read only: the audit log is append-only."""

    list_display = ("created_at", "action", "organization_id", "actor_person_id", "actor_key_id", "ip")
    list_filter = ("action",)
    search_fields = ("action",)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
