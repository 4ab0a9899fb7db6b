from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html_join

from drafts.models import Draft
from paylinks.models import PaymentRequest


@admin.register(PaymentRequest)
class PaymentRequestAdmin(admin.ModelAdmin):
    """Operators look pay links up by order id, owner or token and see the drafts payers
    chose. Status changes only through the services (cancel, expiry, payment), so every
    field is read-only here."""

    list_display = ("id", "user", "status", "fiat_amount", "fiat_currency", "order_id", "expires_at", "created_at")
    list_filter = ("status", "fiat_currency")
    search_fields = ("=id", "order_id", "user__email", "=token", "memo")
    date_hierarchy = "created_at"
    list_select_related = ("user",)
    readonly_fields = [field.name for field in PaymentRequest._meta.fields] + ["option_list", "drafts"]
    exclude = ("options",)

    @admin.display(description="Options")
    def option_list(self, obj: PaymentRequest) -> str:
        return format_html_join(
            "",
            "<div>{} on {} ({}): <code>{}</code></div>",
            ((o["currency"], o["network"], o["method"], o["receiverAddress"]) for o in obj.options),
        )

    @admin.display(description="Drafts created by payers")
    def drafts(self, obj: PaymentRequest) -> str:
        rows = Draft.objects.filter(payment_request_id=obj.id).order_by("-created_at")
        if not rows:
            return "-"
        return format_html_join(
            "",
            '<div><a href="{}">{}</a> {} {} on {}: {}</div>',
            (
                (
                    reverse("admin:drafts_draft_change", args=[d.id]),
                    d.id,
                    d.amount_base_units,
                    d.currency,
                    d.network,
                    d.status,
                )
                for d in rows
            ),
        )

    def has_add_permission(self, request) -> bool:
        return False  # made through the API, with validation against the registry

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # drafts and events refer to it
