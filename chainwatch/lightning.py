"""Lightning settlement, by payment hash.

A draft with a LUD-21 verify URL (from the receiver's Lightning address) is checked there;
otherwise the configured LND REST (GET /v1/invoice/{r_hash_str}) or LNbits
(GET /api/v1/payments/{payment_hash}) node is asked. Settled counts only with a preimage
whose SHA-256 is the payment hash: then the draft goes Seen and Confirmed in one pass.
One request per open Lightning draft per pass (rate-limited): no provider offers more.
"""

from __future__ import annotations

import base64
import hashlib
import logging
from dataclasses import dataclass

from django.conf import settings

import outbound
from chainwatch import services
from chainwatch.models import LIGHTNING_INDEX
from chainwatch.networks import LIGHTNING
from chainwatch.services import TransferData
from chainwatch.transport import ChainError, Http, parse_json
from chainwatch.watcher import PassReport
from drafts.selectors import WatchTarget, watch_targets
from payments.enums import Currency, Method

logger = logging.getLogger(__name__)

_LUD21_MAX_BYTES = 64 * 1024


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

    def lnd(self, payment_hash: str) -> Settlement | None:
        headers = {"Grpc-Metadata-macaroon": settings.LND_MACAROON_HEX} if settings.LND_MACAROON_HEX else {}
        answer = self.http.get_json(f"{settings.LND_REST_URL.rstrip('/')}/v1/invoice/{payment_hash}", headers=headers)
        if answer.get("state") != "SETTLED" or not answer.get("r_preimage"):
            return None
        preimage = base64.b64decode(answer["r_preimage"]).hex()  # bytes fields are base64 in LND REST
        return Settlement(preimage, int(answer.get("amt_paid_msat") or 0) // 1000 or None)

    def lnbits(self, payment_hash: str) -> Settlement | None:
        answer = self.http.get_json(
            f"{settings.LNBITS_URL.rstrip('/')}/api/v1/payments/{payment_hash}",
            headers={"X-Api-Key": settings.LNBITS_API_KEY},
        )
        if not answer.get("paid") or not answer.get("preimage"):
            return None
        msat = abs(int((answer.get("details") or {}).get("amount") or 0))
        return Settlement(answer["preimage"], msat // 1000 or None)

    def settlement(self, target: WatchTarget) -> Settlement | None:
        if target.lnurl_verify_url:
            return self.lud21(target.lnurl_verify_url)
        if settings.LND_REST_URL:
            return self.lnd(target.payment_hash)
        if settings.LNBITS_URL:
            return self.lnbits(target.payment_hash)
        return None


def lightning_pass(network: str) -> PassReport:
    providers = LightningProviders()
    services.cursor_get(network=network, family=LIGHTNING, backend="lightning")
    targets = [
        t
        for t in watch_targets(network=network, reportable=False)
        if t.method == Method.LIGHTNING and t.payment_hash and t.paid_tx_id is None
    ]
    transfers: list[TransferData] = []
    for target in targets:
        try:
            settled = providers.settlement(target)
        except ChainError as exc:  # one receiver's broken verify URL must not stop the others
            logger.warning("lightning %s: %s", target.draft_id, exc)
            continue
        if settled is None:
            continue
        if not preimage_matches(settled.preimage_hex, target.payment_hash):
            logger.warning("lightning %s: preimage does not hash to the payment hash; ignored", target.draft_id)
            continue
        transfers.append(
            TransferData(
                network=network,
                txid=target.payment_hash.lower(),
                index=LIGHTNING_INDEX,
                currency=Currency.BTC,
                receiver_address=target.receiver_address or "",
                amount_base_units=settled.amount_sats or target.amount_base_units,
                finalized=True,
            )
        )
    services.transfers_record(transfers=transfers)
    services.cursor_progress(network=network, family=LIGHTNING, head=None)
    report = PassReport(network=network, family=LIGHTNING, head=0, start=0, end=0, transfers=len(transfers))
    return report
