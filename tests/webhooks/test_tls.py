"""HTTPS deliveries connect to the checked IP address but verify the certificate, and send
SNI, for the endpoint's hostname: made one at a time (a worker's lane) and by a dispatcher
pass (webhooks/passes.py, the asyncio sender)."""

from __future__ import annotations

import datetime as dt
import ssl
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.ownservers import serve_in_background
from tests.webhooks.conftest import deliver_due as deliver_one_at_a_time
from tests.webhooks.conftest import record
from webhooks import passes
from webhooks.models import Delivery, DeliveryAttempt, EventType

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["one at a time", "a pass"])
def deliver_due(request):
    if request.param == "a pass":
        return lambda: passes.pass_run(seconds=1)
    return deliver_one_at_a_time


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificates(tmp: Path, hostname: str) -> tuple[Path, Path, Path]:
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("Test CA"))
        .issuer_name(_name("Test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name(hostname))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path, cert_path, key_path = tmp / "ca.pem", tmp / "cert.pem", tmp / "key.pem"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return ca_path, cert_path, key_path


@pytest.fixture
def https_receiver(tmp_path):
    servers = []

    def make(hostname: str):
        ca_path, cert_path, key_path = _certificates(tmp_path, hostname)
        seen = {"sni": [], "hosts": []}

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                seen["hosts"].append(self.headers["Host"])
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_path, key_path)
        context.sni_callback = lambda sock, name, ctx: seen["sni"].append(name)
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        server.daemon_threads = True
        serve_in_background(server)
        servers.append(server)
        return server.server_address[1], ca_path, seen

    yield make
    for server in servers:
        server.shutdown()
        server.server_close()


def test_https_delivery_verifies_the_hostname_and_sends_it_as_sni(
    https_receiver, make_webhook, owner, settings, deliver_due
):
    port, ca_path, seen = https_receiver("localhost")
    settings.OUTBOUND_CA_BUNDLE = str(ca_path)
    make_webhook(f"https://localhost:{port}/hook")
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d"})

    deliver_due()

    assert Delivery.objects.get().status == "Succeeded", DeliveryAttempt.objects.get().error
    assert seen["sni"] == ["localhost"]
    assert seen["hosts"] == [f"localhost:{port}"]


def test_a_certificate_for_another_name_fails_the_attempt(https_receiver, make_webhook, owner, settings, deliver_due):
    port, ca_path, seen = https_receiver("other.example")
    settings.OUTBOUND_CA_BUNDLE = str(ca_path)
    make_webhook(f"https://localhost:{port}/hook")
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d"})

    deliver_due()

    attempt = DeliveryAttempt.objects.get()
    assert attempt.status_code is None
    assert "certificate" in attempt.error.lower() or "hostname" in attempt.error.lower()
    assert seen["hosts"] == []


def test_a_certificate_from_an_untrusted_ca_fails_the_attempt(
    https_receiver, make_webhook, owner, settings, deliver_due
):
    port, _, seen = https_receiver("localhost")
    settings.OUTBOUND_CA_BUNDLE = ""  # certifi's bundle does not know the test CA
    make_webhook(f"https://localhost:{port}/hook")
    record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d"})

    deliver_due()

    assert DeliveryAttempt.objects.get().status_code is None
    assert Delivery.objects.get().status == "Pending"
    assert seen["hosts"] == []
