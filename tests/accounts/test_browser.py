"""A real browser (Debian's chromium through playwright) creates an account with a password
and the emailed code, read from the test mail outbox, and reaches the signed-in page.
Screenshots at phone and desktop widths go to var/screenshots/ (git-ignored)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.core import mail
from django.db import connection

from notifications.services import emails_send_due
from tests.accounts.conftest import CODE_RE

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


def _send_due_emails() -> None:
    """What the worker does after commit. In a thread of its own: this thread runs
    playwright's event loop, where Django would give the call a connection nobody closes."""

    def work() -> None:
        try:
            emails_send_due()
        finally:
            connection.close()

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()


def _code_from_outbox(to: str) -> str:
    _send_due_emails()
    message = [m for m in mail.outbox if to in m.to][-1]
    return CODE_RE.search(message.body).group(1)


@pytest.mark.parametrize(("width", "height", "name"), [(360, 780, "phone"), (1280, 800, "desktop")])
def test_a_person_registers_in_a_browser_with_password_and_emailed_code(chromium, live_server, width, height, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    email = f"browser-{name}@example.com"
    page = chromium.new_page(viewport={"width": width, "height": height})
    violations: list[str] = []
    page.on("console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None)

    response = page.goto(f"{live_server.url}/account/register")
    assert response.status == 200
    assert "script-src" not in response.headers["content-security-policy"]
    assert "default-src 'none'" in response.headers["content-security-policy"]
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill("short")
    page.get_by_role("button", name="Continue").click()
    assert page.get_by_role("alert").first.is_visible()  # a weak password is named next to its field
    page.screenshot(path=str(SHOTS / f"register-error-{name}.png"), full_page=True)

    page.get_by_label("Password").fill("violet-harbor-42-lantern")
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url("**/account/register/code")
    page.screenshot(path=str(SHOTS / f"register-code-{name}.png"), full_page=True)
    page.get_by_label("Code").fill(_code_from_outbox(email))
    page.get_by_role("button", name="Confirm").click()

    page.wait_for_url("**/account/")
    assert page.get_by_role("heading", name="Your account").is_visible()
    assert page.get_by_test_id("account-email").inner_text() == email
    page.screenshot(path=str(SHOTS / f"account-{name}.png"), full_page=True)
    # Nothing overflows a phone's width.
    assert page.evaluate("document.documentElement.scrollWidth") <= width

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/account/sign-in")
    assert page.goto(f"{live_server.url}/account/").url.endswith("/account/sign-in?next=/account/")
    assert violations == []
