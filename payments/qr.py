"""QR codes for payment URIs, as inline SVG (pages, PDF) or a data: URI (JSON APIs)."""

from __future__ import annotations

import base64
import io

import segno

# Medium error correction: survives a smudged print or a phone screen glare, yet
# keeps a long Solana Pay or EIP-681 URI at a size cameras read at arm's length.
_ERROR = "m"
_SCALE = 4
_BORDER = 4  # the quiet zone the QR standard requires around the symbol


def _make(data: str) -> segno.QRCode:
    if not data:
        raise ValueError("nothing to encode")
    # boost_error=False keeps the level we asked for, so the output is stable.
    return segno.make_qr(data, error=_ERROR, boost_error=False)


def qr_svg(data: str) -> str:
    """An ``<svg>`` element (no XML declaration) to embed in HTML."""
    buf = io.BytesIO()
    _make(data).save(buf, kind="svg", xmldecl=False, svgns=True, scale=_SCALE, border=_BORDER)
    return buf.getvalue().decode("utf-8")


def qr_svg_responsive(data: str, *, title: str) -> str:
    """An ``<svg>`` that scales to its box (viewBox, no fixed size), with a white quiet zone
    (cameras need dark on light, also in a dark-mode page) and a title for screen readers."""
    buf = io.BytesIO()
    _make(data).save(
        buf,
        kind="svg",
        xmldecl=False,
        svgns=True,
        scale=_SCALE,
        border=_BORDER,
        omitsize=True,
        light="#fff",
        title=title,
    )
    return buf.getvalue().decode("utf-8")


def qr_svg_data_uri(data: str) -> str:
    """The same SVG as ``data:image/svg+xml;base64,...`` for an ``<img src>``."""
    encoded = base64.b64encode(qr_svg(data).encode("utf-8")).decode("ascii")
    return f"data:image/svg+xml;base64,{encoded}"


def qr_png(data: str, *, scale: int = _SCALE) -> bytes:
    """A PNG of the same symbol, for clients that cannot render SVG."""
    buf = io.BytesIO()
    _make(data).save(buf, kind="png", scale=scale, border=_BORDER)
    return buf.getvalue()
