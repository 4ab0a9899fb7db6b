from django.contrib import admin

from refunds.models import Refund


@admin.register(Refund)
class RefundAdmin(admin.ModelAdmin):
    """Operators look refunds up by owner, draft or token. Status changes only through the
    services (claim, approval, cancel, expiry, the payout's confirmation), so every field is
    read-only here."""

    list_display = ("id", "user", "status", "currency", "network", "amount_base_units", "fiat_amount", "created_at")
    list_filter = ("status", "network")
    search_fields = ("=id", "=draft__id", "user__email", "=token", "refund_address")
    date_hierarchy = "created_at"
    list_select_related = ("user",)
    readonly_fields = [field.name for field in Refund._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
