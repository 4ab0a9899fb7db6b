"""Which user-supplied URLs the service may call: webhook endpoints, Lightning addresses'
LNURL-pay servers, their callbacks and LUD-21 verify URLs.

A URL is checked when it is given and again before every request (the answer of DNS can
change in between: DNS rebinding). `target_resolve` returns the vetted IP address the
connection must go to; the transport connects to that address and sends the hostname only
as Host header and TLS SNI. A kept-alive connection stays pinned to the address it was
checked at (`CheckedUrl.address_allowed` checks it again), so reusing it needs no lookup.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_LENGTH = 2048

# Networks that `is_global` lets through (or that carry an IPv4 address inside IPv6) but
# that no outbound request may reach. Belt and braces: most are also non-global.
_BLOCKED_NETWORKS = [
    ipaddress.ip_network(net)
    for net in (
        "0.0.0.0/8",  # "this network"
        "10.0.0.0/8",
        "100.64.0.0/10",  # CGNAT (and Alibaba Cloud metadata 100.100.100.200)
        "127.0.0.0/8",
        "169.254.0.0/16",  # link-local, cloud metadata 169.254.169.254
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",  # 6to4 relay anycast
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, broadcast
        "::/96",  # unspecified, loopback, IPv4-compatible
        "::ffff:0:0/96",  # IPv4-mapped
        "::ffff:0:0:0/96",  # IPv4-translated
        "64:ff9b::/96",  # NAT64
        "64:ff9b:1::/48",  # local-use NAT64
        "100::/64",  # discard
        "2001::/23",  # IETF protocol assignments, Teredo
        "2001:db8::/32",
        "2002::/16",  # 6to4 (embeds an IPv4 address)
        "fc00::/7",  # unique local (AWS metadata fd00:ec2::254)
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    )
]

# Names that only ever mean something inside a network.
_BLOCKED_NAMES = ("localhost", "metadata", "metadata.google.internal", "instance-data")
_BLOCKED_SUFFIXES = (".localhost", ".internal", ".local", ".home.arpa", ".intranet", ".lan", ".corp")
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


class UrlNotAllowed(Exception):
    """The URL may not be called. The message says why, for the API client."""


class Resolver(Protocol):
    def resolve(self, host: str, port: int) -> list[IPAddress]: ...


class SystemResolver:
    """The real resolver: the operating system's getaddrinfo."""

    def resolve(self, host: str, port: int) -> list[IPAddress]:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError, OSError) as exc:
            raise UrlNotAllowed(_("The host %(host)s does not resolve.") % {"host": host}) from exc
        found: list[IPAddress] = []
        for info in infos:
            address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
            if address not in found:
                found.append(address)
        return found


_override: Resolver | None = None


def resolver() -> Resolver:
    if _override is not None:
        return _override
    return import_string(settings.OUTBOUND_RESOLVER)()


def resolver_set(replacement: Resolver | None) -> None:
    """Install another resolver (a test double for DNS), or None for the configured one."""
    global _override
    _override = replacement


def is_public_address(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and (
        address.ipv4_mapped or address.sixtofour or address.teredo or address.scope_id
    ):
        return False
    if any(address.version == net.version and address in net for net in _BLOCKED_NETWORKS):
        return False
    return (
        address.is_global
        and not address.is_multicast
        and not address.is_reserved
        and not address.is_link_local
        and not address.is_loopback
        and not address.is_unspecified
        and not address.is_private
    )


@dataclass(frozen=True)
class Target:
    """A vetted URL: connect to `address`, send `host_header`, verify TLS for `hostname`."""

    scheme: str
    hostname: str
    port: int
    path: str
    address: IPAddress

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        name = f"[{self.hostname}]" if ":" in self.hostname else self.hostname
        return name if self.port == default else f"{name}:{self.port}"


@dataclass(frozen=True)
class CheckedUrl:
    """A URL that passed every check that needs no DNS: what may be called, not yet where."""

    scheme: str
    hostname: str
    port: int
    path: str
    literal: IPAddress | None
    loopback: bool

    def address_allowed(self, address: IPAddress) -> bool:
        """May a connection to this URL go to `address` (a kept-alive connection's, say)?"""
        if self.literal is not None and address != self.literal:
            return False
        return address.is_loopback if self.loopback else is_public_address(address)

    def at(self, address: IPAddress) -> Target:
        return Target(self.scheme, self.hostname, self.port, self.path, address)

    def resolve(self, *, resolve_with: Resolver | None = None) -> Target:
        if self.literal is not None:
            addresses: list[IPAddress] = [self.literal]
        else:
            addresses = (resolve_with or resolver()).resolve(self.hostname, self.port)
            if not addresses:
                raise UrlNotAllowed(_("The host %(host)s does not resolve.") % {"host": self.hostname})
        if self.loopback:
            if not all(address.is_loopback for address in addresses):
                raise UrlNotAllowed(
                    _("The host %(host)s does not resolve to a loopback address.") % {"host": self.hostname}
                )
        # The refused address is not named: that would let a caller map internal DNS.
        elif not all(is_public_address(address) for address in addresses):
            raise UrlNotAllowed(_("The URL resolves to a private or internal address."))
        return self.at(addresses[0])


def _parse(url: str, *, allow_loopback: bool) -> CheckedUrl:
    if not isinstance(url, str) or not url:
        raise UrlNotAllowed(_("Give an HTTPS URL."))
    if len(url) > MAX_URL_LENGTH:
        raise UrlNotAllowed(_("The URL is longer than %(count)s characters.") % {"count": MAX_URL_LENGTH})
    if any(ord(ch) <= 32 or ord(ch) == 127 or ch == "\\" for ch in url) or not url.isascii():
        raise UrlNotAllowed(_("The URL contains spaces, control characters, backslashes or non-ASCII characters."))
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UrlNotAllowed(_("The URL cannot be parsed.")) from exc
    scheme = parts.scheme.lower()
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise UrlNotAllowed(_("The URL may not contain credentials."))
    if parts.fragment:
        raise UrlNotAllowed(_("The URL may not contain a fragment."))
    hostname = (parts.hostname or "").lower()
    if not hostname:
        raise UrlNotAllowed(_("The URL has no host."))
    loopback = allow_loopback and hostname in LOOPBACK_HOSTS and scheme in ("http", "https")
    if scheme != "https" and not loopback:
        raise UrlNotAllowed(_("The URL must use HTTPS."))
    if port is None:
        port = 443 if scheme == "https" else 80
    if port == 0:
        raise UrlNotAllowed(_("The URL's port is not allowed."))
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return CheckedUrl(scheme, hostname, port, path, _literal(hostname), loopback)


def _literal(hostname: str) -> IPAddress | None:
    """The IP address a host names literally, or None for a DNS name. Every other numeric
    spelling (2130706433, 0x7f.1, 0177.0.0.1, 127.1) is refused: resolvers read them
    differently, so no check of ours could be sure what they reach."""
    if ":" in hostname:
        try:
            return ipaddress.IPv6Address(hostname)
        except ValueError as exc:
            raise UrlNotAllowed(_("The URL's IPv6 address is not valid.")) from exc
    labels = hostname.rstrip(".").split(".") if hostname.rstrip(".") else [""]
    if _NUMERIC_LABEL.match(labels[-1]):
        try:
            return ipaddress.IPv4Address(hostname)
        except ValueError as exc:
            raise UrlNotAllowed(_("Numeric host names other than a plain dotted IPv4 address are refused.")) from exc
    if not all(_LABEL.match(label) for label in labels) or len(hostname) > 253:
        raise UrlNotAllowed(_("The URL's host name is not valid."))
    return None


def _check_name(hostname: str) -> None:
    name = hostname.rstrip(".")
    # A single label ("db", "redis") only means something through a local search domain.
    if name in _BLOCKED_NAMES or name.endswith(_BLOCKED_SUFFIXES) or "." not in name:
        raise UrlNotAllowed(_("The host %(host)s is internal.") % {"host": hostname})


def loopback_allowed() -> bool:
    return bool(settings.OUTBOUND_ALLOW_LOOPBACK)


def target_resolve(url: str, *, resolve_with: Resolver | None = None) -> Target:
    """Check the URL and resolve its host; every address must be public (or loopback when
    OUTBOUND_ALLOW_LOOPBACK admits it). Returns the address to connect to."""
    return url_check(url).resolve(resolve_with=resolve_with)


def url_check(url: str) -> CheckedUrl:
    """Every check of the URL itself (scheme, credentials, host name, port, internal names);
    raises UrlNotAllowed. Its addresses are checked by `resolve` or `address_allowed`."""
    checked = _parse(url, allow_loopback=loopback_allowed())
    if checked.literal is None and not checked.loopback:
        _check_name(checked.hostname)
    return checked
