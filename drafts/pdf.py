"""A draft as a one-page PDF (WeasyPrint), for printing or attaching to an e-mail."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from weasyprint import HTML

from payments.qr import qr_svg

TEMPLATE = "drafts/draft_pdf.html"


def _no_fetch(url: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    # Everything the page needs is inline; refusing fetches keeps a crafted memo
    # or URI from making the renderer reach the network or the file system.
    raise ValueError(f"external resources are not loaded in draft PDFs: {url[:80]}")


def render_draft_pdf(context: dict[str, Any]) -> bytes:
    """Render ``templates/drafts/draft_pdf.html`` to PDF bytes.

    Context keys (strings already formatted for display unless noted):
    ``draft_id``, ``amount``, ``currency``, ``network``, ``receiver_address``;
    optional ``fiat_amount``, ``fiat_currency``, ``rate``, ``payment_method``,
    ``memo``, ``fee_lines`` (list of ``{"label", "amount"}``), ``expires_at`` and
    ``created_at`` (aware datetimes, shown in UTC), ``payment_uri`` (also drawn
    as a QR code). Values are HTML-escaped by the template.
    """
    values = dict(context)
    uri = values.get("payment_uri")
    # segno's SVG carries only the module path, never the encoded text, so it is safe to inline.
    values["qr_svg"] = mark_safe(qr_svg(uri)) if uri else ""  # noqa: S308
    html = render_to_string(TEMPLATE, values)
    return HTML(string=html, base_url=None, url_fetcher=_no_fetch).write_pdf()
