"""Lightning settlement, by payment hash.

The configured node is read through its own index, never invoice by invoice, so a pass costs
the same whatever the number of open drafts (docs/decisions.md, Chain watching):

- LND REST, by settle_index once the node has settled an invoice we have read: one
  `GET /v1/invoices/subscribe?settle_index=S` a pass, whose stream first sends every invoice
  settled after S; the pass reads it until it goes quiet (CHAINWATCH_LND_STREAM_IDLE_MS) and
  keeps the cursor `settle:S` back by CHAINWATCH_LND_RELIST_SECONDS of settlements.
- LND REST before that (and from a cursor written by add_index): `GET /v1/invoices?index_offset=N
  &num_max_invoices=M`, paged forward by add_index; the cursor then stays just before the
  oldest invoice still open (an invoice settles or is cancelled on expiry, never reopens).
- LNbits: `GET /api/v1/payments` of settled incoming payments, newest update first, read back
  to the update time of the last pass (less a margin).

A draft with a LUD-21 verify URL (the receiver's Lightning address server, not our node) that
the node did not report settled is asked there: at most CHAINWATCH_LUD21_CHECKS_PER_PASS a
pass, the longest unchecked first. Settled counts only with a preimage whose SHA-256 is the
payment hash: then the draft goes Seen and Confirmed in one pass.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

import outbound
from chainwatch import services
from chainwatch.models import LIGHTNING_INDEX
from chainwatch.networks import LIGHTNING
from chainwatch.services import TransferData
from chainwatch.transport import ChainError, Http, parse_json
from chainwatch.watcher import PassReport
from drafts.selectors import WatchTarget, lightning_targets
from payments.enums import Currency

logger = logging.getLogger(__name__)

_LUD21_MAX_BYTES = 64 * 1024
SETTLE_CURSOR = "settle:"  # Cursor.position of an LND node read by settle_index


@dataclass(frozen=True)
class Settlement:
    preimage_hex: str
    amount_sats: int | None  # None: the provider does not say (LUD-21); the invoice fixed it


def preimage_matches(preimage_hex: str, payment_hash: str) -> bool:
    try:
        return hashlib.sha256(bytes.fromhex(preimage_hex)).hexdigest() == payment_hash.lower()
    except ValueError:
        return False


class LightningProviders:
    def __init__(self) -> None:
        self.http = Http()

    @property
    def calls(self) -> int:
        return self.http.calls

    def lud21(self, url: str) -> Settlement | None:
        # The verify URL came from the receiver's LNURL server: user-supplied, so it goes
        # through the outbound guard (checked again now: its DNS may have changed since).
        self.http.limiter.wait()
        self.http.calls += 1
        try:
            response = outbound.get(
                url,
                headers={"Accept": "application/json"},
                timeout=settings.CHAINWATCH_HTTP_TIMEOUT_SECONDS,
                max_bytes=_LUD21_MAX_BYTES,
            )
        except outbound.UrlNotAllowed as exc:
            raise ChainError(f"LUD-21 verify URL refused: {exc}") from exc
        if response.status_code is None or response.status_code >= 400 or response.truncated:
            raise ChainError(f"LUD-21 verify: {response.error or 'answer too large'}")
        try:
            answer = parse_json(response.body.decode("utf-8"))
        except ValueError as exc:
            raise ChainError("LUD-21 verify: the answer is not JSON") from exc
        if not isinstance(answer, dict):
            raise ChainError("LUD-21 verify: the answer is not a JSON object")
        if answer.get("status") == "ERROR":
            raise ChainError(f"LUD-21 verify: {answer.get('reason', 'error')}")
        if answer.get("settled") and answer.get("preimage"):
            return Settlement(answer["preimage"], None)
        return None

    def _lnd_headers(self) -> dict[str, str]:
        return {"Grpc-Metadata-macaroon": settings.LND_MACAROON_HEX} if settings.LND_MACAROON_HEX else {}

    def lnd_settled(self, position: str, hashes: set[str]) -> tuple[dict[str, Settlement], str]:
        """Settled invoices among `hashes`, and the new cursor: by settle_index when the cursor
        holds one, else by add_index (which moves to settle_index once a settlement is read)."""
        if position.startswith(SETTLE_CURSOR):
            return self._lnd_settled_since(int(position.removeprefix(SETTLE_CURSOR)), hashes)
        return self._lnd_listed(position, hashes)

    def _lnd_listed(self, position: str, hashes: set[str]) -> tuple[dict[str, Settlement], str]:
        """ListInvoices paged forward by add_index from the cursor. The new cursor: the add_index
        just before the oldest invoice still open; or, once a settled invoice was read, the
        highest settle_index read (of those settled before the last CHAINWATCH_LND_RELIST_SECONDS):
        every invoice open now settles above it."""
        url = f"{settings.LND_REST_URL.rstrip('/')}/v1/invoices"
        limit = settings.CHAINWATCH_LND_INVOICES_PER_CALL
        offset = int(position or 0)
        found: dict[str, Settlement] = {}
        oldest_open: int | None = None
        settle_index = 0  # the highest read of an invoice settled before `recent`
        recent = time.time() - settings.CHAINWATCH_LND_RELIST_SECONDS
        while True:
            page = self.http.get_json(
                url, headers=self._lnd_headers(), params={"index_offset": offset, "num_max_invoices": limit}
            )
            invoices = page.get("invoices") or []
            for invoice in invoices:
                add_index = int(invoice["add_index"])
                if invoice.get("state") in ("OPEN", "ACCEPTED"):
                    oldest_open = add_index if oldest_open is None else min(oldest_open, add_index)
                elif invoice.get("state") == "SETTLED":
                    if int(invoice.get("settle_date") or 0) < recent:
                        settle_index = max(settle_index, int(invoice.get("settle_index") or 0))
                    self._lnd_note(invoice, hashes, found)
                offset = max(offset, add_index)
            if len(invoices) < limit:
                break
        if settle_index:
            return found, f"{SETTLE_CURSOR}{settle_index}"
        return found, str(oldest_open - 1 if oldest_open is not None else offset)

    def _lnd_settled_since(self, since: int, hashes: set[str]) -> tuple[dict[str, Settlement], str]:
        """SubscribeInvoices from settle_index `since`: LND first sends every invoice settled
        after it (in settle order), then live updates, and never ends the stream, so it is read
        until it stays quiet for CHAINWATCH_LND_STREAM_IDLE_MS (at most CHAINWATCH_LND_STREAM_SECONDS).
        The new cursor is the highest settle_index read, less the settlements of the last
        CHAINWATCH_LND_RELIST_SECONDS (a draft committed just after this pass read its targets
        may be paid at once), and never below `since`."""
        url = f"{settings.LND_REST_URL.rstrip('/')}/v1/invoices/subscribe"
        idle = settings.CHAINWATCH_LND_STREAM_IDLE_MS / 1000
        deadline = time.monotonic() + settings.CHAINWATCH_LND_STREAM_SECONDS
        recent = time.time() - settings.CHAINWATCH_LND_RELIST_SECONDS
        found: dict[str, Settlement] = {}
        keep = since  # the settle_index read last before the first recent settlement
        settled_recently = False
        self.http.limiter.wait()
        self.http.calls += 1
        try:
            response = self.http.session.get(
                url,
                headers=self._lnd_headers(),
                params={"settle_index": since},
                stream=True,
                timeout=(settings.CHAINWATCH_HTTP_TIMEOUT_SECONDS, idle),
            )
        except requests.ConnectTimeout as exc:
            raise ChainError(f"GET {url} failed: {type(exc).__name__}") from exc
        except requests.Timeout:
            return found, f"{SETTLE_CURSOR}{since}"  # no answer yet: nothing was settled since
        except requests.RequestException as exc:
            raise ChainError(f"GET {url} failed: {type(exc).__name__}") from exc
        with response:
            if response.status_code >= 400:
                raise ChainError(f"GET {url} answered {response.status_code}")
            try:
                for line in response.iter_lines():
                    if line.strip():
                        message = parse_json(line.decode("utf-8"))
                        if not isinstance(message, dict) or "error" in message:
                            raise ChainError(f"LND invoice stream: {message!r:.200}")
                        invoice = message.get("result") or {}
                        index = int(invoice.get("settle_index") or 0)
                        if invoice.get("state") == "SETTLED" and index > since:
                            self._lnd_note(invoice, hashes, found)
                            if int(invoice.get("settle_date") or 0) >= recent:
                                settled_recently = True  # from here on read again next pass
                            elif not settled_recently:
                                keep = index
                    if time.monotonic() > deadline:
                        break
            except (requests.ConnectionError, requests.Timeout):
                pass  # quiet for the idle time: the backlog is read (a cut stream is read again from the cursor)
        return found, f"{SETTLE_CURSOR}{keep}"

    @staticmethod
    def _lnd_note(invoice: dict[str, Any], hashes: set[str], found: dict[str, Settlement]) -> None:
        if not invoice.get("r_preimage"):
            return
        payment_hash = base64.b64decode(invoice["r_hash"]).hex()  # bytes fields are base64 in LND REST
        if payment_hash in hashes:
            preimage = base64.b64decode(invoice["r_preimage"]).hex()
            found[payment_hash] = Settlement(preimage, int(invoice.get("amt_paid_msat") or 0) // 1000 or None)

    def lnbits_settled(
        self, position: str, hashes: set[str], *, first_since: datetime
    ) -> tuple[dict[str, Settlement], str]:
        """Settled incoming payments among `hashes`, newest update first, back to the cursor (an
        update time, less a margin for payments committed out of order and clock skew; on the
        first pass `first_since`, when the oldest draft was made); and the new cursor."""
        url = f"{settings.LNBITS_URL.rstrip('/')}/api/v1/payments"
        limit = min(settings.CHAINWATCH_LNBITS_PAYMENTS_PER_CALL, LNBITS_PAGE_CAP)
        since = (_parse_time(position) if position else first_since) - timedelta(
            seconds=settings.CHAINWATCH_LNBITS_RELIST_SECONDS
        )
        found: dict[str, Settlement] = {}
        newest = position
        offset = 0
        read: set[str] = set()
        # A page shorter than asked is not the last one: a server may cap pages below the
        # limit without saying so. Stop on an empty page, a page reaching back past `since`,
        # or one that brings nothing not read already (the server does not move on).
        while True:
            params = {
                "status[eq]": "success",
                "amount[gt]": 0,
                "sortby": "updated_at",
                "direction": "desc",
                "limit": limit,
                "offset": offset,
            }
            page = self.http.get_json(url, headers={"X-Api-Key": settings.LNBITS_API_KEY}, params=params)
            older = False
            fresh = 0
            for payment in page:
                key = str(payment.get("checking_id") or payment.get("payment_hash") or "")
                fresh += key not in read
                read.add(key)
                updated = _parse_time(payment["updated_at"])
                if newest == "" or updated > _parse_time(newest):
                    newest = payment["updated_at"]
                if updated < since:
                    older = True
                    continue
                payment_hash = str(payment.get("payment_hash") or "").lower()
                if payment.get("status") == "success" and payment.get("preimage") and payment_hash in hashes:
                    found[payment_hash] = Settlement(
                        payment["preimage"], abs(int(payment.get("amount") or 0)) // 1000 or None
                    )
            if older or not page or not fresh:
                break
            offset += len(page)
        return found, newest


# LNbits answers at most this many payments a page, whatever `limit` asks, with a 200 and no
# word of it (lnbits 1.6.2, checked): asking for more than it gives would be pointless.
LNBITS_PAGE_CAP = 1000


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)  # LNbits stores UTC


def _lud21_due(network: str, targets: list[WatchTarget]) -> list[WatchTarget]:
    """The verify URLs to ask this pass: the longest unchecked first, at most the per-pass budget."""
    key = f"chainwatch:lud21-checked:{network}"
    checked: dict[str, float] = cache.get(key) or {}
    due = sorted(targets, key=lambda t: checked.get(t.payment_hash or "", 0.0))[
        : settings.CHAINWATCH_LUD21_CHECKS_PER_PASS
    ]
    now = time.time()
    hashes = {t.payment_hash for t in targets}
    cache.set(
        key, {h: v for h, v in checked.items() if h in hashes} | {t.payment_hash: now for t in due}, timeout=86400
    )
    return due


def lightning_pass(network: str) -> PassReport:
    providers = LightningProviders()
    cursor = services.cursor_get(network=network, family=LIGHTNING, backend="lightning")
    targets = lightning_targets(network=network)
    by_hash = {t.payment_hash.lower(): t for t in targets if t.payment_hash}
    settled: dict[str, Settlement] = {}
    position = cursor.position
    if settings.LND_REST_URL:
        settled, position = providers.lnd_settled(cursor.position, set(by_hash))
    elif settings.LNBITS_URL:
        first_since = min((t.created_at for t in targets), default=timezone.now())
        settled, position = providers.lnbits_settled(cursor.position, set(by_hash), first_since=first_since)
    verify = [t for h, t in by_hash.items() if t.lnurl_verify_url and h not in settled]
    for target in _lud21_due(network, verify):
        assert target.lnurl_verify_url and target.payment_hash  # chosen above for both
        try:
            answer = providers.lud21(target.lnurl_verify_url)
        except ChainError as exc:  # one receiver's broken verify URL must not stop the others
            logger.warning("lightning %s: %s", target.draft_id, exc)
            continue
        if answer is not None:
            settled[target.payment_hash.lower()] = answer

    transfers: list[TransferData] = []
    for payment_hash, settlement in settled.items():
        target = by_hash[payment_hash]
        if not preimage_matches(settlement.preimage_hex, payment_hash):
            logger.warning("lightning %s: preimage does not hash to the payment hash; ignored", target.draft_id)
            continue
        transfers.append(
            TransferData(
                network=network,
                txid=payment_hash,
                index=LIGHTNING_INDEX,
                currency=Currency.BTC,
                receiver_address=target.receiver_address or "",
                amount_base_units=settlement.amount_sats or target.amount_base_units,
                finalized=True,
            )
        )
    services.transfers_record(transfers=transfers)
    services.cursor_progress(network=network, family=LIGHTNING, head=None, position=position)
    report = PassReport(network=network, family=LIGHTNING, head=0, start=0, end=0, transfers=len(transfers))
    return report
