"""Lightning addresses go through the same outbound guard as webhook endpoints: the address
itself, the callback its server hands back and the LUD-21 verify URL. An anonymous payer on
a checkout page can make the service fetch them, so each is held to the same rules."""

from __future__ import annotations

import pytest

from core.api.problems import Problem
from payments.lightning import fetch_invoice_for_lightning_address
from tests.outbound.hostile import HOSTILE_URLS, PUBLIC_DNS, admitted_by_the_loopback_setting

HOSTILE_ADDRESSES = [
    "alice@127.0.0.1",
    "alice@127.5.6.7",
    "alice@localhost",
    "alice@app.localhost",
    "alice@[::1]",
    "alice@10.1.2.3",
    "alice@172.16.0.1",
    "alice@192.168.1.10",
    "alice@169.254.169.254",
    "alice@metadata.google.internal",
    "alice@metadata",
    "alice@100.64.0.1",
    "alice@100.100.100.200",
    "alice@224.0.0.1",
    "alice@240.0.0.1",
    "alice@255.255.255.255",
    "alice@0.0.0.0",
    "alice@[::]",
    "alice@[::ffff:7f00:1]",  # IPv4-mapped 127.0.0.1
    "alice@[64:ff9b::a9fe:a9fe]",  # NAT64 of 169.254.169.254
    "alice@[2002:7f00:1::]",  # 6to4 of 127.0.0.1
    "alice@[fd00:ec2::254]",
    "alice@[fe80::1]",
    "alice@2130706433",  # decimal 127.0.0.1
    "alice@0x7f000001",
    "alice@0177.0.0.1",
    "alice@127.1",
    "alice@rebind.example.com",  # DNS answer is private
    "alice@mixed.example.com",  # one public and one private answer
    "alice@nowhere.example.com",  # does not resolve
    "alice@db",
    "alice@redis",
    "alice@hooks.example.com:8443",  # a port would only serve to probe other services
    "alice@hooks.example.com@127.0.0.1",
    "alice@hooks.example.com/@127.0.0.1",
    "alice@hooks.example.com#@127.0.0.1",
]


@pytest.fixture
def dns(fake_dns, settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    fake_dns.answers.update(PUBLIC_DNS)
    return fake_dns


def problem_of(address: str, **kwargs) -> Problem:
    with pytest.raises(Problem) as caught:
        fetch_invoice_for_lightning_address(address, 50_000, network="Mainnet", field="lightningAddress", **kwargs)
    assert caught.value.status_code == 400
    return caught.value


@pytest.mark.parametrize("address", HOSTILE_ADDRESSES)
def test_a_lightning_address_on_a_hostile_host_is_refused_before_any_request(dns, address):
    problem = problem_of(address)

    assert problem.code in ("invalid_lightning_address", "lightning_address_unreachable")
    assert problem.errors[0]["field"] == "lightningAddress"
    # Refused by the guard or the address rules, never by a failed connection.
    assert "did not answer" not in problem.detail


def test_at_least_as_many_hostile_addresses_as_hostile_webhook_urls_are_covered():
    assert len(HOSTILE_ADDRESSES) >= 30


def test_a_refused_lightning_address_does_not_reveal_the_internal_address(dns):
    problem = problem_of("alice@rebind.example.com")

    assert "10.0.0.5" not in problem.detail


CALLBACKS = [url for url in HOSTILE_URLS if not admitted_by_the_loopback_setting(url)]


@pytest.mark.parametrize("callback", CALLBACKS)
def test_a_hostile_callback_handed_back_by_the_server_is_refused(lnurl_server, fake_dns, callback):
    fake_dns.answers.update(PUBLIC_DNS)
    lnurl_server.callback_url = callback

    problem = problem_of(lnurl_server.address)

    assert problem.code == "lightning_address_invalid_response"
    assert lnurl_server.callbacks == []


@pytest.mark.parametrize("verify", CALLBACKS)
def test_a_hostile_verify_url_handed_back_by_the_server_is_refused(lnurl_server, fake_dns, verify):
    fake_dns.answers.update(PUBLIC_DNS)
    lnurl_server.verify_url = verify

    problem = problem_of(lnurl_server.address)

    assert problem.code == "lightning_address_invalid_response"


def test_the_loopback_setting_admits_the_local_server_and_nothing_else(lnurl_server, fake_dns):
    fake_dns.answers.update(PUBLIC_DNS)

    assert fetch_invoice_for_lightning_address(lnurl_server.address, 50_000, network="Mainnet").bolt11
    for address in ("alice@10.1.2.3", "alice@rebind.example.com", "alice@169.254.169.254"):
        assert problem_of(address).code in ("invalid_lightning_address", "lightning_address_unreachable")
