"""Lightning: checking a receiver's BOLT11 invoice, and asking a Lightning address for one.

The service never creates or pays invoices. It reads the receiver's invoice to
learn what the payer will pay (amount, payment hash, expiry) and refuses one it
cannot trust: bad signature, wrong network, expired, or for another amount.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import bolt11
from bolt11.exceptions import Bolt11SignatureVerifyException
from django.conf import settings
from django.utils import timezone

import outbound
from core.problems import Problem
from payments.enums import Network

# BOLT11 currency prefixes per network. Testnet is testnet4, whose invoices use
# "lntb" like testnet3; signet ("lntbs") is accepted too because most public
# test Lightning nodes run on signet and matching is by payment hash, not chain.
_CURRENCIES = {
    Network.MAINNET.value: ("bc",),
    Network.TESTNET.value: ("tb", "tbs"),
    Network.SIGNET.value: ("tbs",),
    Network.REGTEST.value: ("bcrt",),
}
_HRP = re.compile(r"ln(?P<currency>bcrt|bc|tbs|tb)(?P<amount>[1-9][0-9]*[munp]?)?")
_MSAT_PER_BTC = 100_000_000_000
_MULTIPLIER_DIVISOR = {"": 1, "m": 10**3, "u": 10**6, "n": 10**9, "p": 10**12}
_MAX_INVOICE_CHARS = 7_089  # the most a QR code can hold; no real invoice is longer

_LNURL_MAX_BYTES = 64 * 1024
_LNURL_MAX_REDIRECTS = 3
_LIGHTNING_ADDRESS = re.compile(
    r"(?P<user>[a-z0-9\-_.+]+)@(?P<host>[a-z0-9.\-]+|\[[0-9a-f:]+\])(?::(?P<port>[0-9]{1,5}))?"
)
_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "[::1]"}


@dataclass(frozen=True)
class Invoice:
    """A decoded BOLT11 invoice whose signature checked out.

    ``payee`` is the node key from the ``n`` field when present (the signature
    was then verified against it), otherwise the key recovered from the
    signature, which BOLT11 defines as the check. Recovery always yields some
    key, so it proves the invoice unmodified only against a known node id:
    compare ``payee`` when you have one.
    """

    bolt11: str
    network: str
    payment_hash: str
    amount_msat: int | None
    created_at: datetime
    expires_at: datetime
    payee: str
    description: str | None
    description_hash: str | None


@dataclass(frozen=True)
class LnurlInvoice:
    bolt11: str
    verify_url: str | None  # LUD-21: where the payment can be checked, if offered
    invoice: Invoice


def _invalid(detail: str, field: str, code: str = "invalid_bolt11") -> Problem:
    return Problem(detail, code=code, field=field)


def _hrp_amount_msat(hrp: str, field: str) -> tuple[str, int | None]:
    # Our own exact reading of the amount: the library goes through Decimal and
    # int() and would truncate "lnbc15p" (1.5 msat) to 1 msat instead of failing.
    match = _HRP.fullmatch(hrp)
    if match is None:
        raise _invalid("The invoice's prefix is not a known BOLT11 network and amount.", field)
    amount = match["amount"]
    if amount is None:
        return match["currency"], None
    digits, unit = (amount[:-1], amount[-1]) if amount[-1].isalpha() else (amount, "")
    msat, remainder = divmod(int(digits) * _MSAT_PER_BTC, _MULTIPLIER_DIVISOR[unit])
    if remainder:
        raise _invalid("The invoice amount is a fraction of a millisatoshi.", field)
    return match["currency"], msat


def decode_invoice(
    bolt11_invoice: str,
    *,
    network: str,
    now: datetime | None = None,
    field: str = "bolt11",
    allow_amountless: bool = False,
) -> Invoice:
    """Decode and check a BOLT11 invoice for a Bitcoin ``network`` ("Mainnet", "Testnet", "Signet", "Regtest").

    Raises ``Problem`` (400, ``field``): ``invalid_bolt11`` (malformed, bad
    checksum or signature), ``invoice_network_mismatch``, ``invoice_expired``,
    ``invoice_amountless`` (unless ``allow_amountless``: an amountless invoice
    lets the payer choose what to pay, which an exact-amount draft cannot accept).
    """
    if not isinstance(bolt11_invoice, str):
        raise _invalid("The invoice must be a string.", field)
    text = bolt11_invoice.strip()
    if text.lower().startswith("lightning:"):
        text = text[len("lightning:") :]
    if not text or len(text) > _MAX_INVOICE_CHARS:
        raise _invalid("This is not a BOLT11 invoice.", field)
    if text != text.lower() and text != text.upper():
        raise _invalid("A BOLT11 invoice is all lower case or all upper case.", field)
    text = text.lower()
    hrp = text[: text.rfind("1")] if "1" in text else ""
    currency, msat = _hrp_amount_msat(hrp, field)

    try:
        decoded = bolt11.decode(text)
        created_at = datetime.fromtimestamp(decoded.date, tz=UTC)
        expires_at = created_at + timedelta(seconds=decoded.expiry)
        payment_hash = decoded.payment_hash
        payee = decoded.payee
    except Bolt11SignatureVerifyException as exc:
        raise _invalid("The invoice's signature does not match its payee.", field) from exc
    except Exception as exc:  # the library raises many types (bech32, bitstring, unicode, overflow)
        raise _invalid(f"This is not a valid BOLT11 invoice ({exc}).", field) from exc
    if decoded.currency != currency or (decoded.amount_msat or None) != msat or not payee:
        raise _invalid("The invoice could not be read consistently.", field)

    if currency not in _CURRENCIES.get(network, ()):
        raise _invalid(
            f"The invoice is for the Lightning network '{currency}', not for {network}.",
            field,
            "invoice_network_mismatch",
        )
    if (now or timezone.now()) >= expires_at:
        raise _invalid(f"The invoice expired at {expires_at.isoformat()}.", field, "invoice_expired")
    if msat is None and not allow_amountless:
        raise _invalid(
            "The invoice has no amount; ask the receiver for one with an amount.", field, "invoice_amountless"
        )

    return Invoice(
        bolt11=text,
        network=network,
        payment_hash=payment_hash,
        amount_msat=msat,
        created_at=created_at,
        expires_at=expires_at,
        payee=payee,
        description=decoded.description,
        description_hash=decoded.description_hash,
    )


def check_invoice_amount(invoice: Invoice, amount_sats: int | None, *, field: str = "amountSats") -> int:
    """The draft amount in sats that ``invoice`` bills; ``amount_sats`` (if given) must equal it.

    Raises ``Problem`` 400: ``invoice_amountless`` and ``invoice_sub_satoshi_amount``
    (field bolt11: drafts count whole sats, and a payer's wallet would pay the
    millisatoshis the draft cannot record), ``invoice_amount_mismatch`` (``field``).
    """
    if invoice.amount_msat is None:
        raise _invalid("The invoice has no amount.", "bolt11", "invoice_amountless")
    sats, msat_remainder = divmod(invoice.amount_msat, 1000)
    if msat_remainder:
        raise _invalid(
            f"The invoice asks for {invoice.amount_msat} msat, not a whole number of sats.",
            "bolt11",
            "invoice_sub_satoshi_amount",
        )
    if amount_sats is not None and amount_sats != sats:
        raise _invalid(
            f"amountSats is {amount_sats} but the invoice is for {sats} sats.", field, "invoice_amount_mismatch"
        )
    return sats


# --- Lightning address (LUD-16 over LUD-06 LNURL-pay) ---------------------------------


def _unreachable(detail: str, field: str) -> Problem:
    return Problem(detail, code="lightning_address_unreachable", field=field)


def _bad_response(detail: str, field: str) -> Problem:
    return Problem(detail, code="lightning_address_invalid_response", field=field)


def _get_json(url: str, field: str, *, first_hop_from_address: bool = False) -> dict[str, Any]:
    """GET a JSON object through the outbound guard: same-origin redirects only (each hop
    checked again), a time budget for the whole exchange and a size cap.

    A URL the guard refuses is `lightning_address_unreachable` when we built it from the
    address itself, and `lightning_address_invalid_response` when the server handed it to us
    (a callback or redirect to plain HTTP or to a private address).
    """
    timeout = float(settings.LNURL_TIMEOUT_SECONDS)
    deadline = time.monotonic() + timeout
    origin = urlsplit(url)[:2]
    refused = _unreachable if first_hop_from_address else _bad_response
    for _ in range(_LNURL_MAX_REDIRECTS + 1):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _unreachable("The server answered too slowly.", field)
        try:
            response = outbound.get(
                url, headers={"Accept": "application/json"}, timeout=remaining, max_bytes=_LNURL_MAX_BYTES
            )
        except outbound.UrlNotAllowed as exc:
            raise refused(f"This Lightning address's server may not be called: {exc}", field) from exc
        host = urlsplit(url).netloc
        if response.status_code is None:
            if response.timed_out:
                raise _unreachable("The server answered too slowly.", field)
            raise _unreachable(f"{host} did not answer ({response.error}).", field)
        if response.is_redirect:
            target = urljoin(url, response.location or "")
            if urlsplit(target)[:2] != origin:
                raise _bad_response("The server redirected to another host.", field)
            url, refused = target, _bad_response
            continue
        if response.status_code != 200:
            raise _unreachable(f"{host} answered HTTP {response.status_code}.", field)
        if response.truncated:
            raise _bad_response("The server's answer is too large.", field)
        try:
            data = json.loads(response.body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise _bad_response("The server did not answer with JSON.", field) from exc
        if not isinstance(data, dict):
            raise _bad_response("The server did not answer with a JSON object.", field)
        if str(data.get("status", "")).upper() == "ERROR":
            reason = str(data.get("reason", ""))[:200]
            raise _bad_response(f"The server refused: {reason}", field)
        return data
    raise _bad_response("Too many redirects.", field)


def _pay_request_url(address: str, field: str) -> str:
    match = _LIGHTNING_ADDRESS.fullmatch(address.strip().lower())
    if match is None:
        raise Problem("This is not a Lightning address (user@domain).", code="invalid_lightning_address", field=field)
    host, port = match["host"], match["port"]
    loopback = host in _LOOPBACK_HOSTS
    if loopback and not outbound.loopback_allowed():
        raise Problem("This Lightning address is not reachable.", code="invalid_lightning_address", field=field)
    if port and not loopback:
        # LUD-16 names a domain; a port would only serve to probe other services.
        raise Problem("A Lightning address has no port.", code="invalid_lightning_address", field=field)
    scheme = "http" if loopback else "https"
    netloc = f"{host}:{port}" if port else host
    return f"{scheme}://{netloc}/.well-known/lnurlp/{match['user']}"


def lightning_address_check(address: str, *, field: str = "lightningAddress") -> str:
    """The address in its normal form (lower case), or a 400 ``invalid_lightning_address``:
    its form, and whether the outbound guard would let us call its server (a DNS lookup;
    no request is made). The guard checks it again when an invoice is fetched."""
    url = _pay_request_url(address, field)
    try:
        outbound.target_resolve(url)
    except outbound.UrlNotAllowed as exc:
        raise Problem(
            f"This Lightning address's server may not be called: {exc}", code="invalid_lightning_address", field=field
        ) from exc
    return address.strip().lower()


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def fetch_invoice_for_lightning_address(
    address: str,
    amount_msat: int,
    *,
    network: str,
    field: str = "lightningAddress",
    now: datetime | None = None,
) -> LnurlInvoice:
    """Ask ``address``'s LNURL-pay service for an invoice of exactly ``amount_msat``.

    Checks (LUD-06/16/21): ``tag`` is payRequest; the amount is within
    minSendable..maxSendable; the returned invoice decodes for ``network``, is
    for exactly ``amount_msat`` and commits to the metadata by its description
    hash. Raises ``Problem`` 400 on ``field``: ``invalid_lightning_address``,
    ``lightning_address_unreachable``, ``lightning_address_invalid_response``,
    ``lightning_amount_out_of_range``, ``invoice_network_mismatch``.
    Does network I/O: call it outside any database transaction.
    """
    if _positive_int(amount_msat) is None:
        raise ValueError(f"amount_msat must be a positive integer, got {amount_msat!r}")
    pay = _get_json(_pay_request_url(address, field), field, first_hop_from_address=True)

    if pay.get("tag") != "payRequest":
        raise _bad_response("The server's answer is not an LNURL-pay request.", field)
    callback, metadata = pay.get("callback"), pay.get("metadata")
    min_sendable, max_sendable = _positive_int(pay.get("minSendable")), _positive_int(pay.get("maxSendable"))
    if not isinstance(callback, str) or not isinstance(metadata, str) or not min_sendable or not max_sendable:
        raise _bad_response("The server's pay request lacks callback, metadata or amount limits.", field)
    if min_sendable > max_sendable:
        raise _bad_response("The server's minSendable is above its maxSendable.", field)
    if not min_sendable <= amount_msat <= max_sendable:
        raise Problem(
            f"This Lightning address accepts {min_sendable} to {max_sendable} msat, not {amount_msat}.",
            code="lightning_amount_out_of_range",
            field=field,
            extra={"minSendableMsat": min_sendable, "maxSendableMsat": max_sendable},
        )

    parts = urlsplit(callback)
    query = urlencode([*parse_qsl(parts.query, keep_blank_values=True), ("amount", str(amount_msat))])
    answer = _get_json(urlunsplit(parts._replace(query=query)), field)

    pr = answer.get("pr")
    if not isinstance(pr, str):
        raise _bad_response("The server's answer has no invoice (pr).", field)
    try:
        invoice = decode_invoice(pr, network=network, now=now, field=field)
    except Problem as exc:
        if exc.code == "invoice_network_mismatch":
            raise Problem(str(exc.detail), code=exc.code, field=field) from exc
        raise _bad_response(f"The server's invoice is unusable: {exc.detail}", field) from exc
    if invoice.amount_msat != amount_msat:
        raise _bad_response(f"The server's invoice is for {invoice.amount_msat} msat, not {amount_msat}.", field)
    if invoice.description_hash != hashlib.sha256(metadata.encode("utf-8")).hexdigest():
        raise _bad_response("The server's invoice does not commit to its metadata (description hash).", field)

    verify_url = answer.get("verify")
    if verify_url is not None:
        if not isinstance(verify_url, str):
            raise _bad_response("The server's verify URL is not a string.", field)
        try:
            outbound.target_resolve(verify_url)
        except outbound.UrlNotAllowed as exc:
            raise _bad_response(f"The server's verify URL may not be called: {exc}", field) from exc
    return LnurlInvoice(bolt11=invoice.bolt11, verify_url=verify_url, invoice=invoice)
