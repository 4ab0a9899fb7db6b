"""Rate limits per API key (or session account), else per client IP.

Writes and reads have separate budgets (settings.API_RATE_LIMITS).
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class ApiRateThrottle(SimpleRateThrottle):
    cache_format = "throttle:%(scope)s:%(ident)s"

    def __init__(self) -> None:  # rates are read per request, not at import
        pass

    def allow_request(self, request, view) -> bool:
        self.scope = "read" if request.method in SAFE_METHODS else "write"
        self.rate = getattr(view, "throttle_rates", {}).get(self.scope) or settings.API_RATE_LIMITS[self.scope]
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request, view) -> str:
        api_key = getattr(request, "auth", None)
        if api_key is not None and getattr(api_key, "pk", None) is not None:
            ident = f"key:{api_key.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user:{request.user.pk}"
        else:
            ident = f"ip:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
