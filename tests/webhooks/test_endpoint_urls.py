"""Which URLs an endpoint may have: HTTPS to public addresses only, checked through DNS."""

from __future__ import annotations

import ipaddress

import pytest

import outbound as netguard
from tests.outbound.hostile import HOSTILE_URLS, PUBLIC_DNS


@pytest.fixture
def public_dns(fake_dns):
    fake_dns.answers.update(PUBLIC_DNS)
    return fake_dns


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_registering_a_hostile_url_is_refused_naming_the_url_field(api_client, public_dns, url):
    response = api_client.post("/api/v1/webhooks", {"url": url}, format="json")

    assert response.status_code == 400, response.json()
    problem = response.json()
    assert problem["errors"][0]["field"] == "url"
    assert problem["code"] in ("webhook_url_not_allowed", "max_length")


def test_at_least_twenty_hostile_urls_are_covered():
    assert len(HOSTILE_URLS) >= 20


def test_a_url_over_2048_characters_is_refused_with_the_length_code(api_client, public_dns):
    url = "https://hooks.example.com/" + "a" * (2049 - len("https://hooks.example.com/"))

    response = api_client.post("/api/v1/webhooks", {"url": url}, format="json")

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "url"


def test_an_https_url_resolving_only_to_public_addresses_is_accepted(api_client, public_dns):
    response = api_client.post("/api/v1/webhooks", {"url": "https://hooks.example.com/pay?x=1"}, format="json")

    assert response.status_code == 200, response.json()
    assert public_dns.calls == ["hooks.example.com"]


def test_a_public_ip_literal_is_accepted_without_dns(api_client, public_dns):
    response = api_client.post("/api/v1/webhooks", {"url": "https://93.184.216.34:8443/hook"}, format="json")

    assert response.status_code == 200
    assert public_dns.calls == []


def test_loopback_targets_are_refused_unless_the_setting_allows_them(api_client, settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    refused = api_client.post("/api/v1/webhooks", {"url": "http://127.0.0.1:8080/hook"}, format="json")
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    admitted = api_client.post("/api/v1/webhooks", {"url": "http://127.0.0.1:8080/hook"}, format="json")
    admitted_by_name = api_client.post("/api/v1/webhooks", {"url": "http://localhost:8080/hook"}, format="json")

    assert refused.status_code == 400
    assert refused.json()["code"] == "webhook_url_not_allowed"
    assert admitted.status_code == 200
    assert admitted_by_name.status_code == 200


def test_the_loopback_setting_admits_no_other_private_address(api_client, loopback):
    for url in ("http://10.0.0.1:8080/", "http://hooks.example.com/", "https://192.168.1.1/"):
        response = api_client.post("/api/v1/webhooks", {"url": url}, format="json")
        assert response.status_code == 400, url


def test_the_loopback_setting_cannot_be_set_through_the_api(api_client, settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = False

    response = api_client.post(
        "/api/v1/webhooks", {"url": "http://127.0.0.1:8080/", "allowLoopback": True}, format="json"
    )

    assert response.status_code == 400
    assert settings.OUTBOUND_ALLOW_LOOPBACK is False


def test_the_system_resolver_asks_getaddrinfo():
    addresses = netguard.SystemResolver().resolve("localhost", 80)

    assert addresses and all(address.is_loopback for address in addresses)


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e"],
)
def test_public_addresses_are_public(address):
    assert netguard.is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address",
    ["100.64.0.1", "169.254.169.254", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "2001:0:4136::1"],
)
def test_addresses_that_embed_or_translate_ipv4_are_not_public(address):
    assert not netguard.is_public_address(ipaddress.ip_address(address))


def test_a_refusal_does_not_reveal_the_internal_address(api_client, public_dns):
    response = api_client.post("/api/v1/webhooks", {"url": "https://rebind.example.com/"}, format="json")

    assert "10.0.0.5" not in response.content.decode()
