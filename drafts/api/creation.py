"""Draft creation at the edge, shared by the REST views and the MCP tools.

Validates an API body (CreateDraftRequest), turns it into the typed DraftRequest, and runs
the one creation door idempotently: the answer is the REST body (201 and the draft) or a
problem document, exactly what a replay of the same Idempotency-Key returns later.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.utils import timezone

from accounts.models import User
from accounts.modes import by_key
from addressbook.selectors import (
    address_book_receiver,
    default_receiver,
    default_receiving_wallet,
    draft_body_receiver,
    receiver_lock_check,
)
from core.api.problems import validated
from core.api.renderers import encoded
from drafts.api.serializers import CreateDraftRequestSerializer
from drafts.creation import draft_create_from_request
from drafts.idempotency import KeyClaim, KeyTaken, Outcome, run_idempotently
from drafts.models import Draft
from drafts.presenters import draft_json
from drafts.requests import DraftRequest, Origin


def draft_request_from_body(body: Any, *, user: User) -> DraftRequest:
    """A CreateDraftRequest body as the typed request; bad input raises the domain Problem.
    An `addressBookId` is resolved here, at the edge, into the entry's address; a body that
    names no receiver (and is not a Lightning draft) is paid to the account's default
    receiving address on the network, when it has one (its receiving wallet, when the default
    entry names one: as if the body named it). A `receivingWalletId` is left for the
    creation, which gives the draft the wallet's next address."""
    data = validated(CreateDraftRequestSerializer, body)
    if data.get("addressBookId") is not None:
        receiver = address_book_receiver(user=user, entry_id=data["addressBookId"], network=data["network"])
        data = {**data, "receiverAddress": receiver}
    elif data.get("receivingWalletId") is not None:
        pass  # the wallet's next address, allocated by the creation (drafts.wallets)
    elif data.get("receiverAddress") is None and not _is_lightning(data):
        wallet_id = default_receiving_wallet(user=user, network=data["network"])
        if wallet_id is not None:  # the default is a receiving wallet: its next address
            data = {**data, "receivingWalletId": wallet_id}
        else:
            data = {**data, "receiverAddress": default_receiver(user=user, network=data["network"])}
    if by_key(user):  # the receiving-address lock binds keys and MCP (no query while it is off)
        receiver_lock_check(user=user, by_key=True, **draft_body_receiver(data))
    return DraftRequest.from_api(data)


def _is_lightning(data: dict[str, Any]) -> bool:
    return data.get("paymentMethod") == "Lightning" or bool(data.get("bolt11") or data.get("lightningAddress"))


def create_draft_outcome(
    *, user: User, body: Any, idempotency_key: str | None, key_field: str = "Idempotency-Key"
) -> Outcome:
    """Create one draft from an API body, once per (account, key, body)."""
    return run_idempotently(
        user=user,
        key=idempotency_key,
        body=body,
        answer=draft_answer,
        work=partial(_create, user=user, body=body),
        key_field=key_field,
    )


def draft_answer(draft: Draft) -> Outcome:
    """What a creation answers (and its key replays): 201 and the draft, encoded once for
    both the response and the record kept under its key."""
    return Outcome(status=201, body=encoded(draft_json(draft)))


def _create(key: KeyClaim | None, *, user: User, body: Any) -> Draft | KeyTaken:
    request = draft_request_from_body(body, user=user)
    return draft_create_from_request(user=user, request=request, origin=Origin.api(), now=timezone.now(), key=key)
