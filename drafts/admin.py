from django.contrib import admin
from django.http import HttpRequest

from drafts.models import Draft, IdempotencyKey


@admin.register(Draft)
class DraftAdmin(admin.ModelAdmin):
    """Operators look drafts up and follow their payments; money and status change only
    through the state machine, so they are read-only here."""

    list_display = (
        "id",
        "user",
        "status",
        "network",
        "currency",
        "method",
        "amount_base_units",
        "fiat_amount",
        "fiat_currency",
        "fee_placement",
        "paid_tx_id",
        "created_at",
    )
    list_filter = ("status", "network", "currency", "method", "fee_placement", "is_fee_settlement", "paid_late")
    search_fields = ("id", "user__email", "receiver_address", "paid_tx_id", "memo", "order_id", "payment_hash")
    date_hierarchy = "created_at"
    list_select_related = ("user",)
    readonly_fields = [field.name for field in Draft._meta.fields if field.name != "memo"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # drafts are made through the API, with pricing and events


@admin.register(IdempotencyKey)
class IdempotencyKeyAdmin(admin.ModelAdmin):
    list_display = ("key", "user", "state", "response_status", "created_at")
    list_filter = ("state",)
    search_fields = ("key", "user__email")
    readonly_fields = ("user", "key", "request_hash", "state", "response_status", "response_body", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
