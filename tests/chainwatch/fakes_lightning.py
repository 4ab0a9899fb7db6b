"""A Lightning node answering as LND's REST API and LNbits' do, for the Lightning watcher's tests."""

from __future__ import annotations

import base64
import copy
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import parse_qs

from tests.chainwatch.conftest import load_fixture

LIGHTNING = load_fixture("lightning.json")


class FakeLightning:
    """LUD-21 verify endpoint, LND REST and LNbits in one local server."""

    def __init__(self) -> None:
        self.invoices: list[str] = []  # payment hashes in the order the node added them
        self.settled: dict[str, str] = {}  # payment hash -> preimage hex the node reports
        self.settled_at: dict[str, datetime] = {}
        self.stream_open_seconds = 5.0  # how long an invoice stream stays open after its backlog
        self.lnbits_page_cap = 1000  # LNbits answers at most this many payments a page, silently
        self.lnbits_ignores_offset = False  # a broken server that answers the first page every time

    def add(self, payment_hash: str) -> None:
        self.invoices.append(payment_hash)

    def settle(self, payment_hash: str, preimage: str) -> None:
        if payment_hash not in self.invoices:
            self.add(payment_hash)
        self.settled[payment_hash] = preimage
        self.settled_at[payment_hash] = datetime.now(UTC).replace(tzinfo=None)

    def lnd_invoice(self, add_index: int, payment_hash: str) -> dict:
        invoice = copy.deepcopy(LIGHTNING["lnd_invoice"])
        invoice.update(r_hash=base64.b64encode(bytes.fromhex(payment_hash)).decode(), add_index=str(add_index))
        if payment_hash in self.settled:
            invoice["r_preimage"] = base64.b64encode(bytes.fromhex(self.settled[payment_hash])).decode()
            invoice["settle_index"] = str(list(self.settled).index(payment_hash) + 1)
            invoice["settle_date"] = str(int(self.settled_at[payment_hash].replace(tzinfo=UTC).timestamp()))
        else:
            invoice.update(state="OPEN", settled=False, amt_paid_sat="0", amt_paid_msat="0", settle_index="0")
        return invoice

    def lnd_stream(self, settle_index: int) -> Iterator[dict]:
        """SubscribeInvoices: every invoice settled after `settle_index` (none for 0, as LND does),
        then the stream stays open for live updates (none here) until the reader leaves."""
        if settle_index:
            for payment_hash in list(self.settled)[settle_index:]:
                yield {"result": self.lnd_invoice(self.invoices.index(payment_hash) + 1, payment_hash)}
        time.sleep(self.stream_open_seconds)

    def handler(self, method, path, body, headers):
        path, _, query = path.partition("?")
        params = {key: values[-1] for key, values in parse_qs(query).items()}
        if path.startswith("/verify/"):
            payment_hash = path.rsplit("/", 1)[1]
            if payment_hash not in self.settled:
                return 200, LIGHTNING["lud21_open"]
            return 200, dict(LIGHTNING["lud21_settled"], preimage=self.settled[payment_hash])
        if path == "/v1/invoices":
            if headers.get("Grpc-Metadata-macaroon") != "0201abcd":
                return 401, {"code": 16, "message": "expected 1 macaroon, got 0"}
            offset, limit = int(params.get("index_offset", 0)), int(params.get("num_max_invoices", 100))
            page = [self.lnd_invoice(n, h) for n, h in enumerate(self.invoices, start=1) if n > offset][:limit]
            answer = copy.deepcopy(LIGHTNING["lnd_invoice_list"])
            answer["invoices"] = page
            if page:
                answer.update(first_index_offset=page[0]["add_index"], last_index_offset=page[-1]["add_index"])
            return 200, answer
        if path == "/v1/invoices/subscribe":
            if headers.get("Grpc-Metadata-macaroon") != "0201abcd":
                return 401, {"code": 16, "message": "expected 1 macaroon, got 0"}
            return 200, self.lnd_stream(int(params.get("settle_index", 0)))
        if path == "/api/v1/payments":
            if headers.get("X-Api-Key") != "invoice-key":
                return 401, {"detail": "Invalid key"}
            assert params.get("status[eq]") == "success" and params.get("amount[gt]") == "0"
            assert (params.get("sortby"), params.get("direction")) == ("updated_at", "desc")
            payments = []
            for payment_hash, preimage in self.settled.items():
                item = copy.deepcopy(LIGHTNING["lnbits_payment_list_item"])
                item.update(
                    checking_id=payment_hash,
                    payment_hash=payment_hash,
                    preimage=preimage,
                    updated_at=self.settled_at[payment_hash].isoformat(),
                )
                payments.append(item)
            payments.sort(key=lambda p: p["updated_at"], reverse=True)
            offset, limit = int(params.get("offset", 0)), int(params.get("limit", 0) or len(payments))
            offset = 0 if self.lnbits_ignores_offset else offset
            return 200, payments[offset : offset + min(limit, self.lnbits_page_cap)]
        return 404, {"detail": "Not Found"}
