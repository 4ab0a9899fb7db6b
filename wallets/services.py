"""Receiving wallets: register a merchant's public descriptor, list, read and archive them.

The addresses themselves are handed out by drafts.wallets (one per draft, under the wallet's
row lock), which also counts the gap of addresses handed out and never paid.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from accounts.modes import livemode_of, network_check, owned
from audit import services as audit
from core.problems import Conflict, NotFound, Problem
from payments.registry import require_network_enabled
from wallets.descriptors import BITCOIN_NETWORKS, derive_address, parse_receiving_descriptor, private_key_check
from wallets.models import ReceivingWallet


class WalletExists(Conflict):
    default_code = "wallet_exists"


def receiving_wallet_create(
    *, user, network: str, descriptor: str, script_type: str | None = None, label: str = ""
) -> ReceivingWallet:
    """Check the descriptor (private keys refused first, the network's key versions, the
    checksum when given) and register it; its receive branch starts at index 0."""
    private_key_check({"descriptor": descriptor, "label": label, "scriptType": script_type or ""})
    if network not in BITCOIN_NETWORKS:
        raise Problem("Receiving wallets are for Bitcoin networks.", code="unsupported_network", field="network")
    network_check(user, network)
    require_network_enabled(network)
    parsed = parse_receiving_descriptor(descriptor, network=network, script_type=script_type)
    wallet = ReceivingWallet(
        user=user,
        livemode=livemode_of(user),
        label=label,
        network=network,
        descriptor=parsed.descriptor,
        script_type=parsed.script_type,
        fingerprint=parsed.fingerprint,
        derivation_path=parsed.derivation_path,
        first_address=derive_address(parsed.descriptor, network=network, index=0),
    )
    try:
        with transaction.atomic():
            wallet.save(force_insert=True)
            audit.record(
                organization=user,
                action="receiving_wallet.added",
                changes={"wallet": wallet.id, "network": network, "fingerprint": wallet.fingerprint, "label": label},
            )
    except IntegrityError:
        mine = owned(ReceivingWallet, user).filter(network=network, first_address=wallet.first_address).first()
        raise WalletExists(
            "This wallet is already registered on this network"
            + (f" (wallet {mine.id})." if mine else ".")
            + " One registration per wallet keeps its addresses from being handed out twice.",
            field="descriptor",
            extra={"walletId": str(mine.id)} if mine else None,
        ) from None
    return wallet


def receiving_wallet_list(*, user, include_archived: bool = False) -> QuerySet:
    wallets = owned(ReceivingWallet, user).order_by("-created_at", "-id")
    return wallets if include_archived else wallets.filter(archived_at__isnull=True)


def receiving_wallet_get(*, user, wallet_id, field: str | None = None) -> ReceivingWallet:
    """The account's wallet in the caller's mode; any other is as unknown as a missing one."""
    try:
        return owned(ReceivingWallet, user).get(pk=wallet_id)
    except (ReceivingWallet.DoesNotExist, ValueError, TypeError):
        if field:
            raise Problem(
                "No receiving wallet of this account has this id.", code="unknown_wallet", field=field
            ) from None
        raise NotFound("No such receiving wallet.") from None


def receiving_wallet_archive(*, wallet: ReceivingWallet) -> ReceivingWallet:
    """No more addresses from it; drafts already made keep theirs and are still watched. Its
    registration stays (the same descriptor cannot be registered anew and start again at 0)."""
    if wallet.archived_at is None:
        wallet.archived_at = timezone.now()
        with transaction.atomic():
            wallet.save(update_fields=["archived_at", "updated_at"])
            audit.record(
                organization=wallet.user_id,
                action="receiving_wallet.archived",
                changes={"wallet": wallet.id, "network": wallet.network},
            )
    return wallet
