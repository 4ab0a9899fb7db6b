from django.contrib import admin

from fees.models import DustWaiver


@admin.register(DustWaiver)
class DustWaiverAdmin(admin.ModelAdmin):
    list_display = ("draft_id", "user", "day", "fee_base_units", "created_at")
    list_filter = ("day",)
    search_fields = ("draft_id", "user__email")
