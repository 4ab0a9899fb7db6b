from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from chainwatch.models import Cursor, ObservedTransfer, SeenBlock, TransferQuorum


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

    def has_add_permission(self, request: HttpRequest) -> bool:
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

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(SeenBlock)
class SeenBlockAdmin(admin.ModelAdmin):
    list_display = ["network", "height", "block_hash", "created_at"]
    list_filter = ["network"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(TransferQuorum)
class TransferQuorumAdmin(admin.ModelAdmin):
    """What each endpoint of a network said of a transfer (chainwatch/quorum.py): disagreements first."""

    list_display = ["transfer", "source", "agreed_confirmations", "agreed_final", "disagreeing_since", "checked_at"]
    list_filter = ["transfer__network"]
    search_fields = ["transfer__txid"]
    raw_id_fields = ["transfer"]
    ordering = ["-disagreeing_since", "-checked_at"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
