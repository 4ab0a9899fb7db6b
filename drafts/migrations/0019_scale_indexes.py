"""Two reads the ten-million-draft bench found slow, each given an index: the needs-attention
list reads an account's reverted, unpaid drafts from an index of those alone (read through the
account's status index it passed over every open draft: 100,000 for the largest account, 0.7 s
per overview), and a list filtered by network and currency reads, and counts, from an index
that leads with them (70 ms per page before, the count's 10,000 rows read from the table).
Built CONCURRENTLY on PostgreSQL, as 0018."""

import importlib

from django.db import migrations, models
from django.db.models import Q

NEW = [
    models.Index(
        fields=["user", "livemode"],
        condition=Q(payment_reverted_at__isnull=False, paid_tx_id__isnull=True),
        name="draft_reverted_unpaid",
    ),
    models.Index(fields=["user", "livemode", "network", "currency", "-created_at", "-id"], name="draft_account_asset"),
]
added_concurrently = importlib.import_module("drafts.migrations.0018_account_list_indexes").added_concurrently


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY runs outside a transaction

    dependencies = [("drafts", "0018_account_list_indexes")]

    operations = [added_concurrently(NEW)]
