from django.contrib import admin, messages
from django.db.models import Sum

from accounts.models import User
from fees.ledger import balance_of, fee_waive
from fees.models import AccruedFee, DustWaiver


@admin.register(DustWaiver)
class DustWaiverAdmin(admin.ModelAdmin):
    list_display = ("draft_id", "user", "day", "fee_base_units", "created_at")
    list_filter = ("day",)
    search_fields = ("draft_id", "user__email")


@admin.register(AccruedFee)
class AccruedFeeAdmin(admin.ModelAdmin):
    """Outstanding balances per account, settlements, and waiving an entry with a reason."""

    list_display = (
        "draft",
        "user",
        "fee_usd",
        "fee_base_units",
        "currency",
        "network",
        "status",
        "accrued_at",
        "settlement_draft",
        "settled_at",
    )
    list_filter = ("status", "network", "currency")
    search_fields = ("user__email", "draft__id", "settlement_draft__id")
    readonly_fields = (
        "user",
        "draft",
        "fee_usd",
        "fee_base_units",
        "currency",
        "network",
        "status",
        "accrued_at",
        "settlement_draft",
        "settled_at",
        "waived_at",
    )
    fields = readonly_fields[:7] + ("waived_reason",) + readonly_fields[7:]
    actions = ["waive_selected"]

    def has_add_permission(self, request) -> bool:
        return False  # entries come from confirmed drafts only

    def changelist_view(self, request, extra_context=None):
        accounts = (
            AccruedFee.objects.filter(status=AccruedFee.Status.OUTSTANDING)
            .values("user_id", "user__email")
            .annotate(total=Sum("fee_usd"))
            .order_by("-total")[:50]
        )
        rows = []
        for row in accounts:
            balance = balance_of(User.objects.get(pk=row["user_id"]))
            rows.append({"email": row["user__email"], "balance": balance})
        extra_context = {**(extra_context or {}), "outstanding_by_account": rows}
        return super().changelist_view(request, extra_context=extra_context)

    def save_model(self, request, obj, form, change):
        # Typing a reason on an outstanding entry waives it.
        if change and "waived_reason" in form.changed_data and obj.waived_reason.strip():
            fee_waive(entry=obj, reason=obj.waived_reason.strip())

    @admin.action(description="Waive the selected outstanding fees")
    def waive_selected(self, request, queryset):
        reason = f"Waived in bulk by {request.user.email}"
        waived = 0
        for entry in queryset.filter(status=AccruedFee.Status.OUTSTANDING):
            fee_waive(entry=entry, reason=reason)
            waived += 1
        self.message_user(request, f"Waived {waived} fee(s).", messages.SUCCESS)
