from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from accounts.models import ApiKey, User


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ["email"]
    list_display = ["email", "is_active", "is_staff", "date_joined", "last_login"]
    list_filter = ["is_active", "is_staff", "is_superuser"]
    search_fields = ["email"]
    readonly_fields = ["date_joined", "last_login"]
    fieldsets = [
        (None, {"fields": ["email", "password"]}),
        ("Permissions", {"fields": ["is_active", "is_staff", "is_superuser", "groups", "user_permissions"]}),
        ("Dates", {"fields": ["date_joined", "last_login"]}),
    ]
    add_fieldsets = [(None, {"classes": ["wide"], "fields": ["email", "password1", "password2"]})]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "user", "scopes", "expires_at", "last_used_at", "revoked_at", "created_at"]
    list_filter = ["revoked_at", "created_at"]
    search_fields = ["prefix", "name", "user__email"]
    readonly_fields = ["id", "prefix", "key_hash", "last_used_at", "created_at"]
    fields = [
        "id",
        "user",
        "name",
        "prefix",
        "key_hash",
        "scopes",
        "expires_at",
        "last_used_at",
        "revoked_at",
        "created_at",
    ]
    raw_id_fields = ["user"]

    def has_add_permission(self, request) -> bool:
        return False  # keys are issued through the API or `manage.py issue_api_key` so the key is shown once
