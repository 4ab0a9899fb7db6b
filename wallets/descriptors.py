"""A merchant's receiving wallet as a public output descriptor: parsed, checked and derived with
embit (no BIP32 of our own).

Accepted: `wpkh(KEY/0/*)`, `tr(KEY/0/*)` and `sh(wpkh(KEY/0/*))`, KEY an xpub (tpub on test
networks) with an optional key origin `[fingerprint/path]`, the last steps `/0/*` or the
multipath `/<0;1>/*` (the receive branch, 0, is used); an optional BIP380 checksum (`#...`),
checked when present. Or a bare account key: xpub/tpub with its script type, ypub/upub
(sh(wpkh)) or zpub/vpub (wpkh), which the receive branch `/0/*` is appended to.

A private key anywhere in the text (an extended private key, a WIF) is refused before anything
else reads it: `private_key_refused`, and the text is neither stored nor echoed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from django.utils.translation import gettext
from embit import base58
from embit.bip32 import HDKey
from embit.descriptor import Descriptor
from embit.descriptor.checksum import checksum as descriptor_checksum
from embit.networks import NETWORKS as EMBIT_NETWORKS

from core.problems import Problem
from payments.enums import Network

# The embit parameters of each Bitcoin network (address prefixes, extended-key versions).
_EMBIT_NETWORK = {"Mainnet": "main", "Testnet": "test", "Signet": "signet", "Regtest": "regtest"}
BITCOIN_NETWORKS = tuple(_EMBIT_NETWORK)


class ScriptType:
    WPKH = "wpkh"
    TR = "tr"
    SH_WPKH = "sh-wpkh"

    choices = (WPKH, TR, SH_WPKH)


_WRAP = {ScriptType.WPKH: "wpkh({})", ScriptType.TR: "tr({})", ScriptType.SH_WPKH: "sh(wpkh({}))"}
_SHAPES = (
    (ScriptType.SH_WPKH, re.compile(r"^sh\(wpkh\((?P<key>[^()]+)\)\)$")),
    (ScriptType.WPKH, re.compile(r"^wpkh\((?P<key>[^()]+)\)$")),
    (ScriptType.TR, re.compile(r"^tr\((?P<key>[^(),]+)\)$")),
)

# Version bytes of every private extended key (xprv, tprv, yprv, zprv, uprv, vprv and the
# multisig forms) and the WIF prefixes (mainnet 0x80, every test network 0xef).
_PRIVATE_VERSIONS = {
    version for params in EMBIT_NETWORKS.values() for name, version in params.items() if name.endswith("prv")
}
_PUBLIC_VERSIONS = {
    net: {name: params[name] for name in ("xpub", "ypub", "zpub")} for net, params in EMBIT_NETWORKS.items()
}
_WIF_PREFIXES = {params["wif"] for params in EMBIT_NETWORKS.values()}
_BASE58_RUN = re.compile(r"[1-9A-HJ-NP-Za-km-z]{50,}")
_PRIVATE_PREFIX = re.compile(r"[a-zA-Z]prv[1-9A-HJ-NP-Za-km-z]{20,}")


class PrivateKeyRefused(Problem):
    default_code = "private_key_refused"


def private_key_refused(field: str) -> PrivateKeyRefused:
    return PrivateKeyRefused(
        gettext(
            "This looks like a private key. The service never takes private keys: give the wallet's public "
            "descriptor or xpub (docs/bitcoin-wallets.md). Nothing of what you sent was stored."
        ),
        field=field,
    )


def _decoded(run: str) -> bytes:
    try:
        return base58.decode_check(run)
    except Exception:  # noqa: BLE001 - not base58check: not a key
        return b""


def holds_private_key(text: str) -> bool:
    """Whether `text` carries an extended private key or a WIF anywhere in it."""
    if _PRIVATE_PREFIX.search(text):
        return True
    for run in _BASE58_RUN.findall(text):
        raw = _decoded(run)
        if len(raw) == 78 and raw[:4] in _PRIVATE_VERSIONS:
            return True
        if len(raw) in (33, 34) and raw[:1] in _WIF_PREFIXES:
            return True
    return False


def private_key_check(value, *, field: str = "descriptor") -> None:
    """Refuse a body (or any value in it, at any depth) that carries a private key, naming the
    field that holds it, before any other check can echo it."""
    if isinstance(value, str):
        if holds_private_key(value):
            raise private_key_refused(field)
    elif isinstance(value, dict):
        for key, item in value.items():
            name = key if isinstance(key, str) and len(key) <= 64 and not holds_private_key(key) else field
            if isinstance(key, str) and holds_private_key(key):
                raise private_key_refused(field)
            private_key_check(item, field=name)
    elif isinstance(value, list | tuple):
        for item in value:
            private_key_check(item, field=field)


@dataclass(frozen=True)
class ReceivingDescriptor:
    """A checked receive-branch descriptor: its text with checksum, what it pays to, whose key."""

    descriptor: str
    script_type: str
    fingerprint: str  # of the master key, from the key origin ("" when the origin is not given)
    derivation_path: str  # of the account key, from the key origin ("" when not given)


def _bad(detail: str, code: str = "invalid_descriptor") -> Problem:
    return Problem(detail, code=code, field="descriptor")


def _network_of(version: bytes) -> tuple[str, str] | None:
    """(`main` or `test`, `xpub`/`ypub`/`zpub`) of a public extended key's version bytes."""
    for net in ("main", "test"):
        for name, known in _PUBLIC_VERSIONS[net].items():
            if known == version:
                return net, name
    return None


def _key_checked(encoded: str, network: str) -> tuple[HDKey, str]:
    """A public extended key on `network`'s side (main or test), and which kind it was."""
    try:
        key = HDKey.from_string(encoded)
    except Exception:  # noqa: BLE001 - embit raises several kinds for a bad key
        raise _bad(gettext("The extended public key is not valid (base58 checksum or length).")) from None
    if key.is_private:
        raise private_key_refused("descriptor")
    found = _network_of(key.version)
    if found is None:
        raise _bad(gettext("The extended key's version is not a known xpub, ypub, zpub, tpub, upub or vpub."))
    wanted = "main" if network == "Mainnet" else "test"
    if found[0] != wanted:
        if wanted == "main":
            mismatch = gettext(
                "This is a test-network key (tpub, upub or vpub); a %(network)s wallet needs an xpub, ypub or zpub."
            )
        else:
            mismatch = gettext(
                "This is a main-network key (xpub, ypub or zpub); a %(network)s wallet needs a tpub, upub or vpub."
            )
        raise Problem(
            mismatch % {"network": Network(network).label if network in Network.values else network},
            code="network_mismatch",
            field="descriptor",
        )
    return key, found[1]


def _as_xpub(key: HDKey, network: str) -> str:
    """The key with the plain xpub/tpub version (descriptors name no ypub/zpub)."""
    params = EMBIT_NETWORKS[_EMBIT_NETWORK[network]]
    return key.to_base58(version=params["xpub"])


_KEY_EXPRESSION = re.compile(
    r"^(?:\[(?P<fingerprint>[0-9a-fA-F]{8})(?P<path>(?:/[0-9]+['hH]?)*)\])?"
    r"(?P<xkey>[1-9A-HJ-NP-Za-km-z]{100,120})(?P<steps>(?:/[0-9]+['hH]?)*)(?P<tail>/0/\*|/<0;1>/\*)$"
)


def parse_receiving_descriptor(text: str, *, network: str, script_type: str | None = None) -> ReceivingDescriptor:
    """Check a merchant's descriptor (or bare account key and script type) for `network`; the
    receive-branch descriptor with its checksum, or a Problem naming `descriptor`/`scriptType`."""
    private_key_check(text)
    if network not in _EMBIT_NETWORK:
        raise Problem(
            gettext("Receiving wallets are for Bitcoin networks."), code="unsupported_network", field="network"
        )
    text = "".join(text.split())
    if not text:
        raise _bad(gettext("Give an output descriptor or an extended public key."), code="required")
    if "(" not in text:
        return _from_bare_key(text, network=network, script_type=script_type)
    body, _, given = text.partition("#")
    if given and descriptor_checksum(body) != given:
        raise _bad(gettext("The descriptor's checksum (after #) does not match it: it was changed or mistyped."))
    found = [(kind, matched) for kind, shape in _SHAPES if (matched := shape.match(body))]
    if not found:
        raise _bad(
            gettext(
                "Give a single-key descriptor: wpkh(...), tr(...) or sh(wpkh(...)) with one extended public key "
                "ending in /0/* or /<0;1>/*."
            )
        )
    kind, match = found[0]
    if script_type is not None and script_type != kind:
        raise Problem(
            gettext("%(field)s %(script_type)s does not match the descriptor (%(kind)s).")
            % {"field": "scriptType", "script_type": script_type, "kind": kind},
            code="ambiguous",
            field="scriptType",
        )
    expression = _KEY_EXPRESSION.match(match.group("key"))
    if expression is None:
        raise _bad(
            gettext(
                "The key must be an extended public key, optionally with its origin [fingerprint/path], ending in "
                "the receive branch /0/* (or /<0;1>/*)."
            )
        )
    key, _ = _key_checked(expression.group("xkey"), network)
    steps = (expression.group("steps") or "") + "/0/*"
    origin = ""
    if expression.group("fingerprint"):
        origin = f"[{expression.group('fingerprint').lower()}{_hardened(expression.group('path'))}]"
    if any(step[-1:] in ("'", "h", "H") for step in steps.split("/")):
        raise _bad(gettext("A hardened step after the extended public key cannot be derived without the private key."))
    return _made(kind, f"{origin}{_as_xpub(key, network)}{steps}", network, expression.group("fingerprint"), origin)


def _hardened(path: str | None) -> str:
    return (path or "").replace("'", "h").replace("H", "h")


def _from_bare_key(text: str, *, network: str, script_type: str | None) -> ReceivingDescriptor:
    key, kind = _key_checked(text, network)
    implied = {"ypub": ScriptType.SH_WPKH, "zpub": ScriptType.WPKH}.get(kind)
    if implied is not None and script_type is not None and script_type != implied:
        raise Problem(
            gettext("This key's prefix means %(implied)s; %(field)s %(script_type)s contradicts it.")
            % {"implied": implied, "field": "scriptType", "script_type": script_type},
            code="ambiguous",
            field="scriptType",
        )
    chosen = implied or script_type
    if chosen is None:
        raise Problem(
            gettext(
                "An xpub or tpub does not say how its addresses are made: give %(field)s (wpkh, tr or sh-wpkh), or "
                "the wallet's output descriptor."
            )
            % {"field": "scriptType"},
            code="required",
            field="scriptType",
        )
    return _made(chosen, f"{_as_xpub(key, network)}/0/*", network, None, "")


def _made(kind: str, key_expression: str, network: str, fingerprint: str | None, origin: str) -> ReceivingDescriptor:
    body = _WRAP[kind].format(key_expression)
    try:
        parsed = Descriptor.from_string(body)
        parsed.derive(0).address(EMBIT_NETWORKS[_EMBIT_NETWORK[network]])
    except Exception:  # noqa: BLE001 - embit raises several kinds for a descriptor it cannot use
        raise _bad(gettext("The descriptor could not be read.")) from None
    if any(key.is_private for key in parsed.keys):
        raise private_key_refused("descriptor")
    path = origin[9:-1] if origin else ""
    return ReceivingDescriptor(
        descriptor=f"{body}#{descriptor_checksum(body)}",
        script_type=kind,
        fingerprint=(fingerprint or "").lower(),
        derivation_path=f"m{path}" if path else "",
    )


@lru_cache(maxsize=64)
def _parsed(descriptor: str) -> Descriptor:
    return Descriptor.from_string(descriptor.partition("#")[0])


def derive_address(descriptor: str, *, network: str, index: int) -> str:
    """The receive address at `index` of a stored (checked) descriptor on `network`."""
    return _parsed(descriptor).derive(index).address(EMBIT_NETWORKS[_EMBIT_NETWORK[network]])


def derive_addresses(descriptor: str, *, network: str, start: int = 0, count: int = 5) -> list[str]:
    return [derive_address(descriptor, network=network, index=i) for i in range(start, start + count)]
