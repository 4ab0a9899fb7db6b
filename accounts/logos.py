"""The public URL of a merchant's logo, /merchant-logos/<digest>.png.

Only PNGs we encoded ourselves are served (accounts.profiles.logo_encode), named by their
digest so a new logo is a new URL and the old one can be cached for good. The headers keep
a browser from reading it as anything but an image: nosniff, a sandboxing CSP, inline."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from accounts.profiles import merchant_logo_png

DIGEST_PATTERN = r"[0-9a-f]{32}"


@require_GET
def merchant_logo(request: HttpRequest, digest: str) -> HttpResponse:
    png = merchant_logo_png(digest=digest)
    if png is None:
        response = HttpResponse(b"Not found", status=404, content_type="text/plain; charset=utf-8")
        response["Cache-Control"] = "no-store"
    else:
        response = HttpResponse(png, content_type="image/png")
        response["Cache-Control"] = "public, max-age=31536000, immutable"
        response["Content-Disposition"] = 'inline; filename="logo.png"'
        # Emails and other sites may show it; nothing else may be done with it.
        response["Cross-Origin-Resource-Policy"] = "cross-origin"
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response
