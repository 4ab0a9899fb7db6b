"""A software passkey authenticator for tests: soft-webauthn's device, extended to set the
user-verified flag (the server requires it) and to keep a signature count, speaking the
spec's JSON shapes (base64url strings)."""

from __future__ import annotations

import json
from base64 import urlsafe_b64decode, urlsafe_b64encode
from struct import pack

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from fido2 import cbor
from fido2.cose import ES256
from fido2.utils import sha256
from soft_webauthn import SoftWebauthnDevice

UP, UV, AT = 0x01, 0x04, 0x40


def b64u(data: bytes) -> str:
    return urlsafe_b64encode(data).decode("ascii").rstrip("=")


def unb64u(text: str) -> bytes:
    return urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Authenticator(SoftWebauthnDevice):
    """`user_verified=False` leaves the UV flag off; `sign_count` may be set by a test (a
    cloned authenticator replays an old count)."""

    def __init__(self, *, user_verified: bool = True, counts: bool = True) -> None:
        super().__init__()
        self.user_verified = user_verified
        self.counts = counts

    def _flags(self, *extra: int) -> bytes:
        value = UP | (UV if self.user_verified else 0)
        for flag in extra:
            value |= flag
        return bytes([value])

    def create_json(self, public_key: dict, origin: str) -> dict:
        """navigator.credentials.create() for the server's options (JSON, base64url)."""
        assert {"alg": -7, "type": "public-key"} in public_key["pubKeyCredParams"]
        self.cred_init(public_key["rp"]["id"], unb64u(public_key["user"]["id"]))
        client_data = json.dumps(
            {"type": "webauthn.create", "challenge": public_key["challenge"], "origin": origin}
        ).encode()
        cose_key = cbor.encode(ES256.from_cryptography_key(self.private_key.public_key()))
        auth_data = (
            sha256(self.rp_id.encode())
            + self._flags(AT)
            + pack(">I", self.sign_count)
            + self.aaguid
            + pack(">H", len(self.credential_id))
            + self.credential_id
            + cose_key
        )
        attestation = cbor.encode({"authData": auth_data, "fmt": "none", "attStmt": {}})
        return {
            "id": b64u(self.credential_id),
            "rawId": b64u(self.credential_id),
            "type": "public-key",
            "response": {
                "attestationObject": b64u(attestation),
                "clientDataJSON": b64u(client_data),
                "transports": ["Internal"],
            },
            "clientExtensionResults": {},
        }

    def get_json(self, public_key: dict, origin: str) -> dict:
        """navigator.credentials.get() for the server's options."""
        assert public_key["rpId"] == self.rp_id
        if self.counts:
            self.sign_count += 1
        client_data = json.dumps(
            {"type": "webauthn.get", "challenge": public_key["challenge"], "origin": origin}
        ).encode()
        auth_data = sha256(self.rp_id.encode()) + self._flags() + pack(">I", self.sign_count)
        signature = self.private_key.sign(auth_data + sha256(client_data), ec.ECDSA(hashes.SHA256()))
        return {
            "id": b64u(self.credential_id),
            "rawId": b64u(self.credential_id),
            "type": "public-key",
            "response": {
                "authenticatorData": b64u(auth_data),
                "clientDataJSON": b64u(client_data),
                "signature": b64u(signature),
                "userHandle": b64u(self.user_handle),
            },
            "clientExtensionResults": {},
        }
