from django.contrib import admin

from chainwatch.models import Cursor, ObservedTransfer, SeenBlock


@admin.register(Cursor)
class CursorAdmin(admin.ModelAdmin):
    """The operator's view of each watcher: where it is, how far behind, and what last went wrong."""

    list_display = [
        "network",
        "family",
        "backend",
        "height",
        "head",
        "lag",
        "traces",
        "last_advanced_at",
        "last_error_at",
        "error",
    ]
    list_filter = ["family"]
    readonly_fields = [
        "network",
        "family",
        "backend",
        "height",
        "block_hash",
        "head",
        "lag",
        "traces",
        "last_run_at",
        "last_advanced_at",
        "last_error",
        "last_error_at",
        "created_at",
    ]

    @admin.display(description="lag (blocks)")
    def lag(self, cursor: Cursor) -> int | None:
        return cursor.lag

    @admin.display(description="last error")
    def error(self, cursor: Cursor) -> str:
        return cursor.last_error[:120]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(ObservedTransfer)
class ObservedTransferAdmin(admin.ModelAdmin):
    list_display = [
        "network",
        "txid",
        "index",
        "currency",
        "amount_base_units",
        "receiver_address",
        "block_height",
        "confirmations",
        "orphaned",
        "finalized",
        "fee_output_present",
        "draft",
    ]
    list_filter = ["network", "currency", "orphaned", "finalized", "fee_output_present"]
    search_fields = ["txid", "receiver_address", "solana_reference"]
    raw_id_fields = ["draft"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(SeenBlock)
class SeenBlockAdmin(admin.ModelAdmin):
    list_display = ["network", "height", "block_hash", "created_at"]
    list_filter = ["network"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_add_permission(self, request) -> bool:
        return False
