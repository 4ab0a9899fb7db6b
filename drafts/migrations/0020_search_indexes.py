"""The draft list's search (`q`) reads an index per exact branch of its OR: the receiver address
and the payment transaction compared ignoring case, the order id (the draft id has its primary
key). With the memo's branch bounded to a range of the account's list index (the newest
DRAFT_SEARCH_MEMO_WITHIN drafts), PostgreSQL ORs the few matching rows instead of reading every
draft of the account (0.36 to 1.7 s for the account with 100,000 drafts in the ten-million-draft
bench; 23 ms with these and 5,000 memos). The two expression indexes cover every row: made partial (NOT NULL),
PostgreSQL estimated their matches at its default (50,000 rows at ten million drafts) and read
the account in order after all. Built CONCURRENTLY on PostgreSQL, as 0018."""

import importlib

from django.db import migrations, models
from django.db.models import Q
from django.db.models.functions import Upper

NEW = [
    models.Index(Upper("receiver_address"), name="draft_search_receiver"),
    models.Index(Upper("paid_tx_id"), name="draft_search_paid_tx"),
    models.Index(fields=["order_id"], condition=Q(order_id__isnull=False), name="draft_search_order_id"),
]
added_concurrently = importlib.import_module("drafts.migrations.0018_account_list_indexes").added_concurrently


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY runs outside a transaction

    dependencies = [("drafts", "0019_scale_indexes")]

    operations = [added_concurrently(NEW)]
