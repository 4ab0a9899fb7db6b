"""One rule for every list (core.api.pagination, docs/api.md "Lists"): newest first, page numbers
(`page`/`pageSize`) or a cursor (`startingAfter`/`limit`), and the cursor walks a list once
however many rows are written between two pages."""

from __future__ import annotations

import itertools
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.urls import resolve
from django.utils import timezone
from drf_spectacular.generators import EndpointEnumerator
from embit import bip39
from embit.bip32 import HDKey
from embit.networks import NETWORKS as EMBIT

from accounts.authorization import Kind, rule_for
from accounts.models import Invitation, User
from accounts.services import api_key_create
from addressbook.models import AddressBookEntry
from audit.models import AuditEntry
from chainwatch.models import ObservedTransfer, UnmatchedTransfer
from core.api.pagination import PAGE_PARAMETERS
from paylinks.models import PaymentRequest
from recurring.models import RecurringTemplate
from refunds.models import Refund
from tests.factories import make_draft
from tests.openapi import document
from webhooks.models import Delivery, Event, Webhook

pytestmark = pytest.mark.django_db

# GETs that answer a list yet take no page parameters, each with the reason.
NOT_PAGED = {
    "/api/v1/events/stream": "a long poll after its own cursor, oldest first (startingAfter, limit)",
    "/api/v1/auth/passkeys": "a person's passkeys: a handful, answered in full",
    "/api/v1/team/members": "an organization's members, answered in full",
    "/api/v1/attention": "what waits now, oldest first per kind with counts: at most ATTENTION_ITEMS_PER_KIND of each",
}


def _answers_a_list(path: str) -> bool:
    responses = document()["paths"].get(path, {}).get("get", {}).get("responses", {})
    content = responses.get("200", {}).get("content", {})
    for media in content.values():
        schema = media.get("schema", {})
        if "$ref" in schema:
            schema = document()["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
        if schema.get("type") == "array" or schema.get("properties", {}).get("items", {}).get("type") == "array":
            return True
    return False


def list_paths() -> list[str]:
    """Every GET route of the URLconf that answers a list: a viewset's `list`, or an operation
    whose answer is an array or an {items: [...]} envelope."""
    found = set()
    for path, _regex, method, callback in EndpointEnumerator().get_api_endpoints():
        if method != "GET" or not path.startswith("/api/v1/"):
            continue
        if (getattr(callback, "actions", None) or {}).get("get") == "list" or _answers_a_list(path):
            found.add(path)
    return sorted(found)


PAGED = [path for path in list_paths() if path not in NOT_PAGED]


def test_the_lists_are_found_and_every_exception_is_one():
    assert {"/api/v1/drafts", "/api/v1/payment-requests", "/api/v1/refunds", "/api/v1/audit-log"} <= set(PAGED)
    assert set(NOT_PAGED) <= set(list_paths())


def needs_session(path: str) -> bool:
    rule = rule_for(resolve(path).view_name, "GET")
    return rule.kind in (Kind.SESSION, Kind.STEP_UP)


def concrete(path: str, owner: User) -> str:
    """The path with a webhook of the account for its {id} (the delivery log)."""
    if "{id}" not in path:
        return path
    hook = Webhook.objects.create(user=owner, url="https://hooks.example.com/x", secret="whsec_test")
    return path.replace("{id}", str(hook.id))


def read(client, path: str, params: dict[str, Any]) -> tuple[list[str], str | None, Any]:
    """The ids of one page, its next cursor and the response (an envelope, or a plain array
    with X-Next-Cursor)."""
    response = client.get(path, params)
    assert response.status_code == 200, (path, params, response.content)
    body = response.json()
    if isinstance(body, list):
        return [item["id"] for item in body], response.headers.get("X-Next-Cursor"), response
    return [item["id"] for item in body["items"]], body["next"], response


@pytest.mark.parametrize("path", PAGED)
def test_every_list_of_the_urlconf_takes_limit_and_starting_after(path, api_client, session_client, owner):
    documented = {p["name"] for p in document()["paths"][path]["get"].get("parameters", [])}
    assert set(PAGE_PARAMETERS) <= documented, path
    client = session_client if needs_session(path) else api_client
    url = concrete(path, owner)
    ids, after, _ = read(client, url, {"limit": 1})
    assert after is None or after == ids[-1]
    unknown = client.get(url, {"limit": 1, "startingAfter": str(uuid.uuid4())})
    assert unknown.status_code == 400, (path, unknown.content)
    assert unknown["Content-Type"] == "application/problem+json"
    assert [e["field"] for e in unknown.json()["errors"]] == ["startingAfter"], path
    colour = client.get(url, {"limit": 1, "colour": "red"})
    assert [e["field"] for e in colour.json()["errors"]] == ["colour"], path


_amounts = itertools.count(25_000_000)


def draft_of(user: User):
    """A draft row with an amount of its own (an open draft's amount is unique at its address)."""
    return make_draft(user, amount_base_units=next(_amounts))


def _descriptor(n: int) -> str:
    account = HDKey.from_seed(bip39.mnemonic_to_seed("abandon " * 11 + "about")).derive(f"m/84h/1h/{n}h")
    return f"wpkh({account.to_public().to_base58(version=EMBIT['test']['xpub'])}/0/*)"


def _make_row(path: str, owner: User, api_client, n: int) -> None:
    """One more row of the list at `path`, of the account `owner`."""
    later = timezone.now() + timedelta(days=1)
    if path == "/api/v1/drafts":
        draft_of(owner)
    elif path == "/api/v1/payment-requests":
        PaymentRequest.objects.create(
            user=owner, token=uuid.uuid4().hex, fiat_currency="EUR", fiat_amount=10, options=[], expires_at=later
        )
    elif path == "/api/v1/refunds":
        draft = draft_of(owner)
        Refund.objects.create(
            user=owner,
            draft=draft,
            token=uuid.uuid4().hex,
            currency="USDC",
            network="Ethereum",
            amount_base_units=1_000,
            share_base_units=1_000,
            expires_at=later,
        )
    elif path == "/api/v1/api-keys":
        api_key_create(user=owner, name=f"key {n}", scopes=["drafts:read"])
    elif path == "/api/v1/address-book":
        AddressBookEntry.objects.create(
            user=owner, network="Ethereum", address=f"0x{n + 1:040x}", direction="Receiving", label=f"#{n}"
        )
    elif path == "/api/v1/audit-log":
        AuditEntry.objects.create(organization=owner, action="test.listed")
    elif path == "/api/v1/transfers":
        transfer = ObservedTransfer.objects.create(
            network="Ethereum",
            txid=f"0x{uuid.uuid4().hex:0>64}",
            index=0,
            currency="USDC",
            receiver_address="0xabc",
            amount_base_units=n + 1,
        )
        UnmatchedTransfer.objects.create(user=owner, transfer=transfer)
    elif path == "/api/v1/receiving-wallets":
        made = api_client.post(
            "/api/v1/receiving-wallets", {"network": "Testnet", "descriptor": _descriptor(n)}, format="json"
        )
        assert made.status_code in (200, 201), made.content
    elif path == "/api/v1/recurring-templates":
        RecurringTemplate.objects.create(
            user=owner, name=f"Rent {n}", interval="Monthly", first_run_at=later, next_run_at=later, draft={}
        )
    elif path == "/api/v1/webhooks":
        Webhook.objects.create(user=owner, url=f"https://hooks.example.com/{n}", secret="whsec_test")
    elif path == "/api/v1/team/invitations":
        Invitation.objects.create(
            organization=owner,
            email=f"invited{n}@example.com",
            role="viewer",
            token_hash=uuid.uuid4().hex,
            created_by=owner,
            expires_at=later,
        )
    elif path == "/api/v1/events":
        Event.objects.create(user=owner, type="draft.created", data={"n": n})
    elif path.startswith("/api/v1/webhooks/") and path.endswith("/deliveries"):
        hook = Webhook.objects.get(pk=path.split("/")[4])
        Delivery.objects.create(webhook=hook, event=Event.objects.create(user=owner, type="draft.created", data={}))
    else:
        raise AssertionError(f"{path}: a list with no row maker here; add one")


@pytest.mark.parametrize("path", PAGED)
def test_walking_a_list_by_cursor_gives_every_row_once_while_rows_are_written(
    path, api_client, session_client, owner, settings
):
    settings.API_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}
    client = session_client if needs_session(path) else api_client
    url = concrete(path, owner)
    for n in range(5):
        _make_row(url, owner, api_client, n)
    before, _, _ = read(client, url, {"pageSize": 100})
    assert len(before) >= 5

    walked: list[str] = []
    ids, after, _ = read(client, url, {"limit": 2})
    n = 100
    while True:
        walked += ids
        _make_row(url, owner, api_client, n)  # a new row between two pages
        n += 1
        if after is None:
            break
        ids, after, _ = read(client, url, {"limit": 2, "startingAfter": after})

    assert walked == before, path  # each row of the start once, in order; none written meanwhile


def test_page_numbers_repeat_a_row_a_write_pushed_down_and_the_cursor_does_not(api_client, owner):
    drafts = [draft_of(owner) for _ in range(4)]
    first = api_client.get("/api/v1/drafts", {"pageSize": 2}).json()
    assert [d["id"] for d in first["items"]] == [str(drafts[3].id), str(drafts[2].id)]
    assert first["page"] == 1 and first["next"] == str(drafts[2].id) and first["total"] == 4
    draft_of(owner)
    by_number = api_client.get("/api/v1/drafts", {"pageSize": 2, "page": 2}).json()
    assert by_number["items"][0]["id"] == str(drafts[2].id)  # seen again: why the cursor exists
    by_cursor = api_client.get("/api/v1/drafts", {"limit": 2, "startingAfter": first["next"]}).json()
    assert [d["id"] for d in by_cursor["items"]] == [str(drafts[1].id), str(drafts[0].id)]
    assert by_cursor["page"] is None and by_cursor["pageSize"] == 2 and by_cursor["next"] is None
    assert by_cursor["total"] == 5


def test_rows_written_at_the_same_instant_are_walked_once_by_id(api_client, owner):
    moment = timezone.now()
    events = [Event.objects.create(user=owner, type="draft.created", data={}, created_at=moment) for _ in range(5)]
    walked, after = [], None
    while True:
        params = {"limit": 2} | ({"startingAfter": after} if after else {})
        body = api_client.get("/api/v1/events", params).json()
        walked += [e["id"] for e in body["items"]]
        after = body["next"]
        if after is None:
            break
    assert sorted(walked) == sorted(str(e.id) for e in events) and len(walked) == 5


def test_a_cursor_of_another_account_or_out_of_form_is_a_400_naming_it(api_client, owner, other_account):
    theirs = draft_of(other_account)
    mine = draft_of(owner)
    for after in (str(theirs.id), "not-an-id"):
        refused = api_client.get("/api/v1/drafts", {"startingAfter": after})
        assert refused.status_code == 400, refused.content
        assert [e["field"] for e in refused.json()["errors"]] == ["startingAfter"]
        assert str(theirs.id) not in refused.content.decode() or after == str(theirs.id)
    # an item of the account that a filter leaves out is still a place to go on from
    assert api_client.get("/api/v1/drafts", {"startingAfter": str(mine.id), "status": "Expired"}).status_code == 200


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"page": 2, "startingAfter": str(uuid.uuid4())}, "startingAfter"),
        ({"limit": 2, "pageSize": 2}, "limit"),
        ({"limit": 101}, "limit"),
        ({"limit": 0}, "limit"),
    ],
)
def test_page_parameters_that_contradict_or_overflow_are_a_400_naming_one(api_client, params, field):
    refused = api_client.get("/api/v1/webhooks", params)
    assert refused.status_code == 400, refused.content
    assert [e["field"] for e in refused.json()["errors"]] == [field]


def test_the_plain_array_of_the_spec_says_total_and_next_in_headers(api_client, owner):
    later = timezone.now() + timedelta(days=1)
    made = [
        PaymentRequest.objects.create(
            user=owner, token=uuid.uuid4().hex, fiat_currency="EUR", fiat_amount=10, options=[], expires_at=later
        )
        for _ in range(3)
    ]
    first = api_client.get("/api/v1/payment-requests", {"limit": 2})
    assert isinstance(first.json(), list) and first["X-Total-Count"] == "3"
    assert first["X-Next-Cursor"] == str(made[1].id)
    last = api_client.get("/api/v1/payment-requests", {"limit": 2, "startingAfter": first["X-Next-Cursor"]})
    assert [p["id"] for p in last.json()] == [str(made[0].id)] and "X-Next-Cursor" not in last


def _query_enums(path: str) -> dict[str, list[str]]:
    """Each query parameter of the list whose document names its values, with them."""
    found = {}
    for parameter in document()["paths"][path]["get"].get("parameters", []):
        schema = parameter.get("schema", {})
        if "$ref" in schema:
            schema = document()["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
        if parameter["in"] == "query" and "enum" in schema:
            found[parameter["name"]] = [value for value in schema["enum"] if value is not None]
    return found


@pytest.mark.parametrize("path", [path for path in PAGED if _query_enums(path)])
def test_a_list_filter_accepts_each_value_the_document_lists_and_refuses_others(
    path, api_client, session_client, owner
):
    client = session_client if needs_session(path) else api_client
    url = concrete(path, owner)
    for name, values in _query_enums(path).items():
        for value in values:
            answer = client.get(url, {name: value})
            assert answer.status_code == 200, (path, name, value, answer.content)
        refused = client.get(url, {name: "Nope"})
        assert refused.status_code == 400 and [e["field"] for e in refused.json()["errors"]] == [name], (path, name)
