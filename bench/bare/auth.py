"""Bearer key check: one SELECT by the SHA-256 hash of the presented key."""

import hashlib

from rest_framework import authentication, exceptions, permissions

from bench.bare.models import Key


def hash_key(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class KeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        scheme, _, token = authentication.get_authorization_header(request).decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        key = Key.objects.filter(key_hash=hash_key(token.strip())).first()
        if key is None:
            raise exceptions.AuthenticationFailed("The API key is not valid.")
        return None, key

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


class HasKey(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        return request.auth is not None
