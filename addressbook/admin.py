from django.contrib import admin

from addressbook.models import AddressBookEntry


@admin.register(AddressBookEntry)
class AddressBookEntryAdmin(admin.ModelAdmin):
    list_display = ["label", "address", "network", "direction", "verified", "user", "created_at"]
    list_filter = ["network", "direction", "verified"]
    search_fields = ["label", "address", "user__email"]
    raw_id_fields = ["user"]
    readonly_fields = ["id", "created_at", "updated_at"]
