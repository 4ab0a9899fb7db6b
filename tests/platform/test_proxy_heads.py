"""Oversize request heads meet a problem+json refusal at whichever layer sees them first:
nginx refuses first (deploy/nginx.conf.template), gunicorn allows more and answers its own
refusals as problems too (deploy/gunicorn.conf.py)."""

import pytest

from tests.platform.test_proxy import (  # noqa: F401
    get,
    http_request,
    plain_proxy,
    problem_answer,
    served_problems,
)


def request_line_of(size: int, path: str = "/api/v1/drafts") -> bytes:
    """A GET whose request line (without its CRLF) is exactly `size` bytes."""
    start, end = f"GET {path}?pad=", " HTTP/1.1"
    return get(path + "?pad=" + "a" * (size - len(start) - len(end)))


@pytest.mark.slow
def test_every_oversize_head_is_refused_with_a_problem_whether_the_proxy_or_gunicorn_sees_it(plain_proxy):  # noqa: F811
    proxy = plain_proxy()
    port, app = proxy["port"], proxy["app"]
    # Up to the longest line both allow, the app answers (401: no key); past it nginx refuses
    # first, never gunicorn's HTML page.
    for size, status in ((4096, 401), (8190, 401), (8191, 414), (8192, 414), (16384, 414), (65536, 414)):
        assert problem_answer(http_request(port, request_line_of(size)), status)["status"] == status, size
    assert problem_answer(http_request(port, get("/api/v1/drafts", **{"X-Big": "x" * 8000})), 401)
    assert problem_answer(http_request(port, get("/api/v1/drafts", **{"X-Big": "x" * 8200})), 431)
    many = {f"X-Many-{n}": "x" * 7000 for n in range(6)}  # 42 KB of head in lines that fit
    assert problem_answer(http_request(port, get("/api/v1/drafts", **many)), 431)
    # A header line nginx passes grows by the address it adds to X-Forwarded-For: still served.
    assert problem_answer(http_request(port, get("/api/v1/drafts", **{"X-Forwarded-For": "1" * 8100})), 401)

    # gunicorn on its own (no proxy in front) refuses with problem+json too.
    for size in (16384, 65536):
        assert problem_answer(http_request(app, request_line_of(size)), 414)["code"] == "uri_too_long"
    assert problem_answer(http_request(app, get("/livez", **{"X-Big": "x" * 20000})), 431)["code"] == (
        "headers_too_large"
    )
