"""The bodies of the receiving-wallet operations, shared by the REST views (wallets.api.views),
the MCP tools and the dashboard: each takes the account and the parsed input and answers the
REST body. A body carrying a private key is refused before any serializer reads (or echoes) it."""

from __future__ import annotations

from core.api.pagination import page_of
from core.api.problems import validated
from core.wire import json_datetime
from drafts.idempotency import Outcome, create_once
from drafts.wallets import gap_limit, unused_addresses
from wallets import services
from wallets.api.serializers import ReceivingWalletCreateRequestSerializer, ReceivingWalletListQuerySerializer
from wallets.descriptors import derive_addresses, private_key_check
from wallets.models import ReceivingWallet

SHOWN_ADDRESSES = 5


def wallet_json(wallet: ReceivingWallet) -> dict:
    addresses = derive_addresses(wallet.descriptor, network=wallet.network, count=SHOWN_ADDRESSES)
    return {
        "id": str(wallet.id),
        "label": wallet.label,
        "network": wallet.network,
        "descriptor": wallet.descriptor,
        "scriptType": wallet.script_type,
        "fingerprint": wallet.fingerprint,
        "derivationPath": wallet.derivation_path,
        "firstAddresses": [{"index": i, "address": a} for i, a in enumerate(addresses)],
        "nextIndex": wallet.next_index,
        "unusedAddresses": unused_addresses(wallet),
        "gapLimit": gap_limit(),
        "archived": wallet.archived_at is not None,
        "archivedAt": json_datetime(wallet.archived_at) if wallet.archived_at else None,
        "livemode": wallet.livemode,
        "createdAt": json_datetime(wallet.created_at),
    }


def receiving_wallet_create_outcome(
    *, user, body, idempotency_key: str | None, key_field: str = "Idempotency-Key"
) -> Outcome:
    """POST /receiving-wallets once per Idempotency-Key (a private key is refused before anything);
    the MCP tool create_receiving_wallet runs it too, its key named by `key_field`."""
    private_key_check(body)
    return create_once(
        user=user,
        key=idempotency_key,
        operation="receivingWallet",
        body=body,
        make=lambda: receiving_wallet_create_json(user=user, body=body),
        key_field=key_field,
    )


def receiving_wallet_create_json(*, user, body) -> dict:
    """POST /receiving-wallets: the registered wallet, with its first addresses to compare."""
    private_key_check(body)  # first: no later check may store, log or echo it
    data = validated(ReceivingWalletCreateRequestSerializer, body)
    wallet = services.receiving_wallet_create(
        user=user,
        network=data["network"],
        descriptor=data["descriptor"],
        script_type=data.get("scriptType"),
        label=data.get("label") or "",
    )
    return wallet_json(wallet)


def receiving_wallet_page_json(*, user, query: dict) -> dict:
    """GET /receiving-wallets: one page, newest first (archived ones only when asked)."""
    wanted = validated(ReceivingWalletListQuerySerializer, query)
    wallets = services.receiving_wallet_list(user=user, include_archived=wanted["includeArchived"])
    page = page_of(wallets, wanted, within=services.receiving_wallet_list(user=user, include_archived=True))
    return page.envelope([wallet_json(w) for w in page.items])


def receiving_wallet_get_json(*, user, wallet_id) -> dict:
    return wallet_json(services.receiving_wallet_get(user=user, wallet_id=wallet_id))


def receiving_wallet_archive_json(*, user, wallet_id) -> dict:
    """DELETE /receiving-wallets/{id}: archived (no more addresses; its drafts keep theirs)."""
    wallet = services.receiving_wallet_get(user=user, wallet_id=wallet_id)
    return wallet_json(services.receiving_wallet_archive(wallet=wallet))
