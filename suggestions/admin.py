from django.contrib import admin

from suggestions.models import Suggestion
from suggestions.services import suggestions_mark_handled


@admin.register(Suggestion)
class SuggestionAdmin(admin.ModelAdmin):
    list_display = ["short_text", "email", "user", "handled", "created_at"]
    list_filter = ["handled", "created_at"]
    list_editable = ["handled"]
    search_fields = ["text", "email", "user__email"]
    fields = ["id", "text", "email", "user", "handled", "created_at"]
    readonly_fields = ["id", "text", "email", "user", "created_at"]
    actions = ["mark_handled", "mark_not_handled"]

    @admin.display(description="suggestion")
    def short_text(self, obj: Suggestion) -> str:
        return obj.text if len(obj.text) <= 80 else obj.text[:79] + "…"

    @admin.action(description="Mark as handled")
    def mark_handled(self, request, queryset):
        suggestions_mark_handled(suggestion_ids=list(queryset.values_list("pk", flat=True)))

    @admin.action(description="Mark as not handled")
    def mark_not_handled(self, request, queryset):
        suggestions_mark_handled(suggestion_ids=list(queryset.values_list("pk", flat=True)), handled=False)

    def has_add_permission(self, request) -> bool:
        return False
