from django.contrib import admin
from django.http import HttpRequest

from webhooks.models import Delivery, DeliveryAttempt, Event, Webhook


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ["id", "type", "user", "draft_id", "created_at"]
    list_filter = ["type", "created_at"]
    search_fields = ["id", "draft_id", "user__email"]
    readonly_fields = ["id", "user", "type", "data", "draft_id", "created_at"]


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ["url", "user", "active", "events", "consecutive_failures", "disabled_at", "created_at"]
    list_filter = ["active", "created_at"]
    search_fields = ["url", "id", "user__email"]
    # The secrets sign deliveries: they are neither shown nor editable here. Endpoints are
    # registered through the API (which checks the URL); the admin can switch them off and on.
    exclude = ["secret", "previous_secret"]
    readonly_fields = [
        "id",
        "user",
        "url",
        "created_at",
        "consecutive_failures",
        "last_failure_at",
        "disabled_at",
        "disabled_reason",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


class DeliveryAttemptInline(admin.TabularInline):
    model = DeliveryAttempt
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "number",
        "state",
        "claimed_at",
        "started_at",
        "status_code",
        "duration_ms",
        "error",
        "response_excerpt",
    )

    def has_add_permission(self, request: HttpRequest, obj: Delivery | None = None) -> bool:
        return False


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["id", "webhook", "event", "status", "attempt_count", "next_attempt_at", "delivered_at"]
    list_filter = ["status", "created_at"]
    search_fields = ["id", "webhook__url", "event__id", "webhook__user__email"]
    readonly_fields = [
        "id",
        "webhook",
        "event",
        "status",
        "attempt_count",
        "total_attempts",
        "next_attempt_at",
        "delivered_at",
        "created_at",
    ]
    inlines = [DeliveryAttemptInline]
