"""Every dashboard and account page, found in the URLconf (a new page is covered without being
listed here), as a signed-in merchant in each language the dashboard is offered in, at 360 and
1280 px in Chromium: axe-core finds nothing serious, nothing scrolls sideways, and a language
other than English leaves no English prose (the payer pages' check, tests/paylinks/
test_every_language.py). Signed-out account pages (sign-in, sign-up, a forgotten password, an
invitation's and a security email's link) are visited signed out, in the visitor's language.

The languages: MATRIX, those of them in settings.DASHBOARD_LANGUAGES (all 15 are offered).

"No English left": each page is rendered in English (the account's language set to en), then in
the language (the same account switched to it), and no piece of prose may read the same in both,
once the values that read the same in every language are taken out: ids, amounts, addresses
(DATA), and the values `data_values` derives from their sources (network names as the product
shows them, language names written in their own language, webhook event types, the audit log's
actions and data, this test's own objects, an event's payload as its endpoint receives it). A piece
the language's catalog translates with the English words themselves (German "Code") is the
translator's choice, not English left.
"""

from __future__ import annotations

import re
import uuid
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from accounts import teams
from accounts.models import ApiKey, MerchantProfile, Role, User
from accounts.scopes import Scope
from audit.models import AuditEntry
from drafts.models import Draft
from payments.enums import Method, Network
from tests.dashboard.test_browser import _axe_serious, _no_horizontal_overflow, _signed_in_context
from tests.drafts.conftest import ADDRESSES
from tests.factories import make_draft
from tests.paylinks.test_every_language import pieces, same_as_english
from tests.refunds.conftest import paid_draft  # noqa: F401 - a fixture this module uses
from webhooks.models import EventType

MATRIX = ("en", "de", "ar", "ja")
LANGUAGES = [code for code in MATRIX if code in settings.DASHBOARD_LANGUAGES]
PREFIXES = ("dashboard/", "account/")
MEMOS = ("Two coffees",)  # what this test's objects say, in the merchant's words
# Pages a signed-out visitor opens (the rest redirect a visitor to sign-in).
SIGNED_OUT = {
    "register",
    "register_code",
    "login",
    "login_code",
    "forgot",
    "forgot_code",
    "security_link",
    "invitation",
}
# Values that read the same in every language: ids (a UUID or its start), addresses, emails,
# amounts, codes, URLs.
DATA = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://\S+|\b[0-9a-f]{8}(?:-[0-9a-f]{1,12}){0,4}(?:…|\b)|"
    r"\b0x[0-9a-fA-F]+\b|\b[13][a-km-zA-HJ-NP-Z1-9]{25,34}\b|\bbc1[a-z0-9]{20,}\b|\b(?:pdk|whsec)_\w+|"
    r"\b[A-Z]{2,6}\b|[\d.,:/%+-]+"
)


def routes() -> list[tuple[str, str]]:
    """(route, name) of every URL pattern under /dashboard/ and /account/."""

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern), pattern.name

    return [(route, name) for route, name in walk(get_resolver().url_patterns) if route.startswith(PREFIXES)]


def data_values(owner: User) -> list[str]:
    """Values a page shows that read the same in every language, from their sources, longest first."""
    entries = AuditEntry.objects.filter(organization=owner).values_list("action", "changes")
    values = [
        *(str(label) for label in Network.labels),  # network names as the product shows them
        Method.LIGHTNING.value,  # the network a Lightning payment goes over, as the forms name it
        *(name for _code, name in settings.LANGUAGES),  # each language's name in that language
        *EventType.values,  # webhook event types
        *Scope.values,  # API key scopes
        *(action for action, _changes in entries),  # the audit log's actions and their data
        *(str(changes) for _action, changes in entries),
        *(f"{action.split('.')[0]}." for action, _changes in entries),  # the action filter's example
        *MEMOS,  # this test's own objects
        *ApiKey.objects.filter(user=owner).values_list("name", flat=True),
    ]
    return sorted({v for v in values if v}, key=len, reverse=True)


def english_left(english: str, translated: str, language: str, data: list[str]) -> set[str]:
    """Prose that reads the same in English and in the other language, data taken out, except
    what the language's catalog translates with the English words themselves."""
    left = set()
    # A payload shown as its endpoint receives it (JSON in monospace) is data, as an id is.
    payload = re.compile(r'<pre class="mono">.*?</pre>', re.S)
    english, translated = payload.sub(" ", english), payload.sub(" ", translated)
    for piece in pieces(english) & pieces(translated):
        if {piece, piece.strip("()[]:;,.·… ")} & same_as_english(language):  # "(optional)": the msgid is "optional"
            continue
        for value in data:  # a whole value, not a word inside another ("test" in "testserver")
            piece = re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", " ", piece)
        if re.search(r"[A-Za-z]{3,}", DATA.sub(" ", piece)):
            left.add(piece)
    return left


@pytest.fixture
def objects(owner, paid_draft, api_client) -> dict[str, str]:  # noqa: F811 - the imported fixture
    """One of each object a page shows, by the URL parameter that names it."""
    merchant = Client()
    merchant.force_login(owner)
    paid: Draft = paid_draft()
    draft = make_draft(owner)
    link = api_client.post(
        "/api/v1/payment-requests",
        {"fiatCurrency": "EUR", "fiatAmount": 18.5, "memo": MEMOS[0],
         "options": [{"currency": "USDC", "network": "Ethereum", "receiverAddress": ADDRESSES["Ethereum"]}]},
        format="json",
    )  # fmt: skip
    assert link.status_code == 201, link.json()
    issued = merchant.post(
        f"/dashboard/drafts/{paid.id}/refund",
        {"kind": "full", "currency": paid.currency, "network": paid.network, "expiryHours": 336},
    )
    person = User.objects.create_user(f"dev-{uuid.uuid4().hex[:6]}@example.com", "a long enough passphrase")
    teams.member_add(organization=owner, person=person, role=Role.DEVELOPER)  # a row in the audit log too
    from paylinks.models import PaymentRequest
    from refunds.models import Refund
    from webhooks.models import Webhook

    request = PaymentRequest.objects.get(user=owner)
    refund = Refund.objects.filter(draft=paid).first()
    assert refund is not None, issued.content.decode()[:500]
    webhook = Webhook.objects.create(user=owner, url="https://hooks.example.com/x", secret="whsec_test")
    found = {
        "draft_id": str(draft.id),
        "webhook_id": str(webhook.id),
        "refund_id": str(refund.id),
        "person_id": str(person.public_id),
        "payment_request_id": str(request.id),
        "token": "not-a-valid-token",
        "action": "no-such-action",
    }
    return found


def page_urls(objects: dict[str, str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(name, path) of every route with its parameters filled; the routes that could not be."""
    filled, missing = [], []
    for route, name in routes():
        params = re.findall(r"<(?:\w+:)?(\w+)>", route)
        unknown = [p for p in params if p not in objects]
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: objects.get(m.group(1), str(uuid.uuid4())), route)
        if unknown and not name.endswith(POST_ONLY_SUFFIXES):
            missing.append(f"{name}: {', '.join(unknown)}")
        filled.append((name, path))
    return filled, missing


# Routes that only act (POST): their ids may be any; a GET is refused or sent on.
POST_ONLY_SUFFIXES = ("_revoke", "_rotate", "_archive", "_attach", "_default", "_delete", "_usable_now", "_action",
                      "_cancel", "signout", "logout", "mode", "organization", "totp_off")  # fmt: skip


def pages(client: Client, objects: dict[str, str]) -> dict[str, str]:
    """name -> path of every route a GET shows an HTML page at (a form, a list, a detail, a link's
    answer); an action, a download or a redirect is not a page."""
    filled, missing = page_urls(objects)
    assert missing == [], f"routes whose parameters this test cannot fill yet (add them to `objects`): {missing}"
    shown = {}
    for name, path in filled:
        response = client.get(path)
        assert response.status_code < 500, (path, response.status_code)
        if response.status_code in (200, 400, 404, 410) and response["Content-Type"].startswith("text/html"):
            shown[name] = path
    return shown


def merchant_client(user: User, language: str) -> Client:
    set_language(user, language)
    client = Client()
    client.force_login(user)
    return client


def set_language(user: User, language: str) -> None:
    MerchantProfile.objects.update_or_create(user=user, defaults={"language": language})


def signed_in_and_out(client: Client, objects: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    signed_in = {name: path for name, path in pages(client, objects).items() if name not in SIGNED_OUT}
    signed_out = {name: path for name, path in pages(Client(), objects).items() if name in SIGNED_OUT}
    assert {"overview", "drafts", "draft", "webhook", "refund", "paylinks", "security", "profile"} <= set(signed_in)
    assert {"login", "register", "forgot", "invitation", "security_link", "account"} <= set(signed_in) | set(signed_out)
    return signed_in, signed_out


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(600)
@pytest.mark.parametrize("language", [code for code in LANGUAGES if code != "en"])
@pytest.mark.slow
def test_no_english_left_on_any_page(owner, objects, language):
    """The server's HTML of each page in the language against the same page in English: the
    account's language is switched before each request, so the English reference is English."""
    client = merchant_client(owner, "en")
    signed_in, signed_out = signed_in_and_out(client, objects)
    data = data_values(owner)
    left: dict[str, set[str]] = {}
    for path in signed_in.values():
        set_language(owner, "en")
        english = client.get(path).content.decode()
        set_language(owner, language)
        translated = client.get(path).content.decode()
        assert 'lang="en"' in english, path
        assert f'lang="{language}"' in translated, path
        left[path] = english_left(english, translated, language, data)
    for path in signed_out.values():
        english = Client().get(path).content.decode()
        visitor = Client()
        visitor.cookies[settings.LANGUAGE_COOKIE_NAME] = language
        translated = visitor.get(path).content.decode()
        assert 'lang="en"' in english, path
        assert f'lang="{language}"' in translated, path
        left[path] = english_left(english, translated, language, data)
    found = [f"LEFT {language} {path} {sorted(pieces)}" for path, pieces in left.items() if pieces]
    assert found == [], "\n".join(found)


# Each page is loaded once per language, at the phone's width, then looked at again at the
# desktop's (the viewport resized, as a window is): the page's layout at both, one request.
WIDTHS = ((360, 780), (1280, 860))


def looked_at(page, path: str) -> list[str]:
    """At each width of WIDTHS: the page does not scroll sideways, and what axe-core finds."""
    problems = []
    for width, height in WIDTHS:
        page.set_viewport_size({"width": width, "height": height})
        if not _no_horizontal_overflow(page):
            problems.append(f"{path} scrolls sideways at {width}px")
        problems.extend(f"{path} at {width}px: {p}" for p in _axe_serious(page))
    return problems


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(900)
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_dashboard_and_account_page_in_the_merchants_language(chromium, live_server, owner, objects, language):
    signed_in, signed_out = signed_in_and_out(merchant_client(owner, language), objects)
    problems: list[str] = []
    width, height = WIDTHS[0]
    context = _signed_in_context(chromium, live_server, owner, width, height)
    page = context.new_page()
    for path in sorted(signed_in.values()):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{live_server.url}{path}")
        assert page.locator("html").get_attribute("lang") == language, path
        assert page.locator("html").get_attribute("dir") == ("rtl" if language == "ar" else "ltr"), path
        problems += looked_at(page, path)
    visitor = chromium.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
    host = urlsplit(live_server.url).hostname
    visitor.add_cookies([{"name": settings.LANGUAGE_COOKIE_NAME, "value": language, "domain": host, "path": "/"}])
    page = visitor.new_page()
    for path in sorted(signed_out.values()):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{live_server.url}{path}")
        assert page.locator("html").get_attribute("lang") == language, path
        problems += looked_at(page, path)
    assert problems == []
