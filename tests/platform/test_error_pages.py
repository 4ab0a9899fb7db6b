"""A browser's error pages (404, 403, 500) are the site's own: its stylesheet and icon, the
reader's language, a link home; the site's icon answers at /favicon.ico and every base
template links it."""

import pytest
from django.test import Client, override_settings
from django.urls import path

from config import urls as project_urls
from tests.accounts.teams import member

pytestmark = pytest.mark.django_db
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
STYLESHEET = '<link rel="stylesheet" href="/static/accounts/site.css">'
ICON = '<link rel="icon" href="/static/paylinks/favicon.svg" type="image/svg+xml">'


def assert_styled(response, status: int, heading: str) -> str:
    page = response.content.decode()
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    assert STYLESHEET in page and ICON in page
    assert f"<h1>{heading}</h1>" in page
    assert '<a href="/">' in page  # the way home
    assert "script" not in page and "style=" not in page  # the strict policy holds
    assert "default-src 'none'" in response["Content-Security-Policy"]
    return page


def test_an_unknown_address_is_the_styled_404_page():
    assert_styled(Client().get("/no-such-page", HTTP_ACCEPT=BROWSER), 404, "Page not found")


def test_a_payers_unknown_address_is_the_404_page_in_their_language():
    page = assert_styled(
        Client().get("/pay/no/such/page", HTTP_ACCEPT=BROWSER, HTTP_ACCEPT_LANGUAGE="de"), 404, "Seite nicht gefunden"
    )
    assert '<html lang="de"' in page and "Zur Startseite" in page


def test_a_refused_page_is_the_styled_403_page(owner):
    # A viewer of an organization may read its drafts, never make one.
    viewer, _person = member(owner, "viewer", Client)
    response = viewer.post("/dashboard/drafts/new", {}, HTTP_ACCEPT=BROWSER)
    assert_styled(response, 403, "Not allowed")


def crash(request):
    raise RuntimeError("boom")


urlpatterns = [*project_urls.urlpatterns, path("page-crash", crash, name="page-crash")]
handler404 = project_urls.handler404
handler500 = project_urls.handler500


@override_settings(ROOT_URLCONF=__name__, DEBUG=False)
def test_a_crash_is_the_styled_500_page_without_a_trace():
    response = Client(raise_request_exception=False).get("/page-crash", HTTP_ACCEPT=BROWSER)
    page = assert_styled(response, 500, "Something went wrong")
    assert "boom" not in page and "Traceback" not in page


def test_favicon_ico_answers_with_the_sites_icon():
    response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert response.content.startswith(b"<svg")


@pytest.mark.parametrize("address", ["/account/sign-in", "/dashboard/", "/no-such-page"])
def test_every_base_template_links_the_icon(owner, address):
    client = Client()
    client.force_login(owner)
    page = client.get(address, HTTP_ACCEPT=BROWSER).content.decode()
    assert ICON in page
