from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from accounts.models import ApiKey, Passkey, User


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ["email"]
    list_display = ["email", "is_active", "is_staff", "date_joined", "last_login", "deleted_at"]
    list_filter = ["is_active", "is_staff", "is_superuser"]
    search_fields = ["email", "public_id"]
    readonly_fields = ["public_id", "date_joined", "last_login", "deleted_at"]
    fieldsets = [
        (None, {"fields": ["public_id", "email", "password"]}),
        ("Permissions", {"fields": ["is_active", "is_staff", "is_superuser", "groups", "user_permissions"]}),
        ("Dates", {"fields": ["date_joined", "last_login", "deleted_at"]}),
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


@admin.register(Passkey)
class PasskeyAdmin(admin.ModelAdmin):
    """Operators can see and remove a lost passkey; only the owner's browser can add one."""

    list_display = ["name", "user", "sign_count", "backed_up", "created_at", "last_used_at"]
    search_fields = ["name", "user__email"]
    fields = readonly_fields = (
        "id",
        "user",
        "name",
        "sign_count",
        "transports",
        "backed_up",
        "created_at",
        "last_used_at",
    )

    def has_add_permission(self, request) -> bool:
        return False
