"""A draft as a one-page PDF (WeasyPrint), for printing or attaching to an e-mail."""

from __future__ import annotations

import base64
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.safestring import mark_safe
from weasyprint import HTML
from weasyprint.urls import URLFetcherResponse

from payments.qr import qr_svg

TEMPLATE = "drafts/draft_pdf.html"
LOGO_DATA_PREFIX = "data:image/png;base64,"


def _no_fetch(url: str, *args: Any, **kwargs: Any) -> URLFetcherResponse:
    # Everything the page needs is inline; refusing fetches keeps a crafted memo
    # or URI from making the renderer reach the network or the file system. The one
    # exception is the merchant's logo, passed inline as a PNG we encoded ourselves.
    if url.startswith(LOGO_DATA_PREFIX):
        body = base64.b64decode(url[len(LOGO_DATA_PREFIX) :])
        return URLFetcherResponse(url, body=body, headers={"Content-Type": "image/png"})
    raise ValueError(f"external resources are not loaded in draft PDFs: {url[:80]}")


def render_draft_pdf(context: dict[str, Any], *, language: str | None = None, template: str = TEMPLATE) -> bytes:
    """Render ``templates/drafts/draft_pdf.html`` (or `template`: the receipt,
    ``drafts/receipt_pdf.html``) to PDF bytes, in `language` (English by default).

    Context keys (strings already formatted for the reader, payments.formatting, unless noted):
    ``draft_id``, ``amount`` (with the asset's code), ``network``, ``receiver_address``;
    optional ``fiat`` (the fiat amount with its currency), ``rate`` ("1 BTC = 92,172.3 EUR"),
    ``rate_live``, ``payment_method``, ``memo``, ``fee_lines`` (list of
    ``{"label", "amount"}``), ``expires_at`` and ``created_at`` (aware datetimes, shown in
    ``zone``, an IANA name, UTC by default), ``payment_uri`` (also drawn as a QR code),
    ``merchant``, ``support_email``, ``support_url``, ``logo_data_uri``, ``order_id``.
    The receipt's own: ``paid`` (the amount that arrived), ``paid_fiat``, ``accepted`` (the
    merchant accepted an amount off the one asked), ``transactions`` (``{"txid", "url"}``),
    ``paid_at``, ``paid_late``, ``merchant_copy``.
    Values are HTML-escaped by the template.
    """
    values = {"zone": "UTC", **context}
    uri = values.get("payment_uri")
    # segno's SVG carries only the module path, never the encoded text, so it is safe to inline.
    values["qr_svg"] = mark_safe(qr_svg(uri)) if uri else ""  # noqa: S308
    with translation.override(language or settings.LANGUAGE_CODE):
        html = render_to_string(template, values)
    pdf: bytes = HTML(string=html, base_url=None, url_fetcher=_no_fetch).write_pdf()
    return pdf
