"""Run as a script against an SQLite database (see test_collisions_on_sqlite.py): creates the
same exact-amount draft twice and the same fiat-priced draft twice, and prints the answers;
then (the statements built once per process, core/sql/rows.py, on SQLite) reads a draft back,
repeats an idempotent creation and totals accrued fees."""

from __future__ import annotations

import json
import os
import sys
from decimal import Decimal

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
django.setup()

from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import override_settings  # noqa: E402
from django.utils import timezone  # noqa: E402

from accounts.models import User  # noqa: E402
from accounts.scopes import ALL_SCOPES  # noqa: E402
from accounts.services import api_key_create  # noqa: E402
from drafts.models import Draft  # noqa: E402
from fees.ledger import balance_of, fee_accrue  # noqa: E402
from fees.models import AccruedFee  # noqa: E402

call_command("migrate", verbosity=0)
user = User.objects.create_user("sqlite@example.com", "a long enough passphrase")
key = api_key_create(user=user, name="sqlite", scopes=list(ALL_SCOPES)).key
client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
receiver = "0x8617E340B3D01FA5F11F306F4090FD50E238070D"
exact = {"network": "Base", "currency": "USDC", "receiverAddress": receiver, "amountSats": 5_000_000}
fiat = {"network": "Base", "currency": "USDC", "receiverAddress": receiver, "fiatCurrency": "EUR", "fiatAmount": 20}
answers = []
with override_settings(API_RATE_LIMITS={"read": "10000/min", "write": "10000/min"}):
    for body in (exact, exact, fiat, fiat):
        response = client.post("/api/v1/drafts", json.dumps(body), content_type="application/json")
        answers.append({"status": response.status_code, "body": response.json()})
    created = client.post(
        "/api/v1/drafts", json.dumps(fiat), content_type="application/json", HTTP_IDEMPOTENCY_KEY="k1"
    )
    again = client.post("/api/v1/drafts", json.dumps(fiat), content_type="application/json", HTTP_IDEMPOTENCY_KEY="k1")
    read = client.get(f"/api/v1/drafts/{created.json()['id']}")
    answers.append(
        {
            "created": created.json(),
            "replayed": again.json(),
            "replayHeader": again.get("Idempotent-Replayed"),
            "read": read.json(),
            "drafts": Draft.objects.count(),
        }
    )
    for draft in Draft.objects.filter(fee_usd__isnull=False):
        fee_accrue(draft=draft, now=timezone.now())
    total = balance_of(user).outstanding_usd
    expected = sum(AccruedFee.objects.values_list("fee_usd", flat=True), Decimal(0))
    answers.append({"total": str(total), "isDecimal": isinstance(total, Decimal), "expected": str(expected)})

# A write refused by a read that finds a row (insert_then_fetch `unless`) writes nothing here too.
from core.sql.rows import RowInserter, RowReader, Select, WriteRefused, insert_then_fetch  # noqa: E402
from drafts.models import IdempotencyKey  # noqa: E402
from webhooks.models import Event, Webhook  # noqa: E402

held = Select(Draft, columns=["id"], where=[("user", "="), ("amount_base_units", "=")])
taken_amount = Draft.objects.filter(user=user).values_list("amount_base_units", flat=True).first()
outcomes = []
for amount in (taken_amount, taken_amount + 10**9):
    row = IdempotencyKey(user=user, key=f"u-{amount}", request_hash="h", response_status=201, response_body="{}")
    inserts = [
        (RowInserter(IdempotencyKey, on_conflict=["user", "key"]), row),
        (RowInserter(Event), Event(user=user, type="draft.created", data={})),
    ]
    try:
        insert_then_fetch(inserts, RowReader(Webhook, by=["user"]), user.pk, unless=[(held, (user.pk, amount))])
        outcomes.append("written")
    except WriteRefused:
        outcomes.append("refused")
answers.append(
    {
        "outcomes": outcomes,
        "keys": sorted(IdempotencyKey.objects.filter(key__startswith="u-").values_list("key", flat=True)),
    }
)
json.dump(answers, sys.stdout)
