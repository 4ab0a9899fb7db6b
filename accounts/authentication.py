"""Bearer API key authentication for /api/v1 (and the MCP endpoint)."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from rest_framework import authentication, exceptions

from accounts.selectors import api_key_find
from accounts.services import api_key_touch
from config.api.throttling import ApiRateThrottle


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != self.keyword.lower():
            return None
        token = token.strip()
        failures_key = f"auth-failures:{ApiRateThrottle().get_ident(request)}"
        if cache.get(failures_key, 0) >= settings.API_AUTH_FAILURES_PER_MINUTE:
            # DRF checks throttles only after authentication, so guessing is limited here.
            raise exceptions.Throttled(wait=60, detail="Too many failed authentication attempts from this address.")
        api_key = api_key_find(key=token) if token else None
        if api_key is None:
            cache.add(failures_key, 0, timeout=60)
            cache.incr(failures_key)
            raise exceptions.AuthenticationFailed("The API key is not valid.")
        if api_key.revoked_at is not None:
            raise exceptions.AuthenticationFailed("The API key has been revoked.")
        if not api_key.is_usable():
            raise exceptions.AuthenticationFailed("The API key has expired.")
        if not api_key.user.is_active:
            raise exceptions.AuthenticationFailed("The account is disabled.")
        api_key_touch(api_key=api_key)
        return api_key.user, api_key

    def authenticate_header(self, request) -> str:
        return f'{self.keyword} realm="api"'
