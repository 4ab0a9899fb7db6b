"""URLs no outbound request may reach, shared by every caller's tests (webhook endpoints,
Lightning-address servers and the URLs they hand back)."""

from __future__ import annotations

from urllib.parse import urlsplit

# What the fake DNS answers for the names below (everything else does not resolve).
PUBLIC_DNS = {
    "hooks.example.com": ["93.184.216.34"],
    "rebind.example.com": ["10.0.0.5"],
    "mixed.example.com": ["93.184.216.34", "192.168.0.1"],
    "metadata.google.internal": ["169.254.169.254"],
    "app.localhost": ["127.0.0.1"],
}

HOSTILE_URLS = [
    "http://hooks.example.com/webhook",  # not HTTPS
    "ftp://hooks.example.com/webhook",
    "https://127.0.0.1/",  # loopback
    "https://127.5.6.7:8443/",
    "https://localhost/",
    "https://app.localhost/",
    "https://[::1]/",
    "https://10.1.2.3/",  # private
    "https://172.16.0.1/",
    "https://192.168.1.10/",
    "https://169.254.169.254/latest/meta-data/",  # link-local, AWS/GCP/Azure metadata
    "https://metadata.google.internal/computeMetadata/v1/",
    "https://100.64.0.1/",  # CGNAT
    "https://100.100.100.200/",  # Alibaba Cloud metadata (CGNAT range)
    "https://224.0.0.1/",  # multicast
    "https://[ff02::1]/",
    "https://240.0.0.1/",  # reserved
    "https://255.255.255.255/",
    "https://0.0.0.0/",  # unspecified
    "https://[::]/",
    "https://[::ffff:127.0.0.1]/",  # IPv4-mapped
    "https://[::ffff:169.254.169.254]/",
    "https://[::127.0.0.1]/",  # IPv4-compatible
    "https://[64:ff9b::a9fe:a9fe]/",  # NAT64 of 169.254.169.254
    "https://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "https://[fd00:ec2::254]/",  # AWS IPv6 metadata (unique local)
    "https://[fe80::1]/",  # link-local IPv6
    "https://2130706433/",  # decimal 127.0.0.1
    "https://0x7f000001/",  # hex
    "https://0177.0.0.1/",  # octal
    "https://0x7f.0.0.1/",
    "https://127.1/",  # short form
    "https://017700000001/",
    "https://user:pass@hooks.example.com/",  # credentials
    "https://hooks.example.com@127.0.0.1/",
    "https://rebind.example.com/",  # DNS answer is private (see PUBLIC_DNS)
    "https://mixed.example.com/",  # one public and one private answer
    "https://nowhere.example.com/",  # does not resolve
    "https://hooks.example.com/" + "a" * 2048,  # too long
    "https://hooks.example.com\\@127.0.0.1/",
    "https://db/",  # a single label resolves only through a local search domain
    "https://redis:6379/",
]


def admitted_by_the_loopback_setting(url: str) -> bool:
    """True for the few URLs that OUTBOUND_ALLOW_LOOPBACK lets through by design."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    return host in ("127.0.0.1", "localhost", "::1") and "@" not in url and "\\" not in url
