"""One chromium (Debian's, driven by playwright's sync API) per pytest process, a new browser
context per test.

Launching chromium costs about a CPU-second and a half and the playwright driver (node) as much
again; the browser tests launched both for every test. Now the first test of a worker that asks
for `chromium` starts them, and every later test of that worker gets the same browser. What keeps
the tests apart is the browser context (its own cookies, storage, cache and pages): each test
makes its own (`chromium.new_context(...)`, or `chromium.new_page(...)`, which makes one for the
page), and the fixture closes every context the test left when it ends, so the next test starts
from a browser with none (checked at its start).

playwright's sync API marks its event loop as running in this thread after each call
(playwright/_impl/_greenlets.py, `wait_for_future`), so that Django refuses ORM calls in it as
async-unsafe and `asyncio.run` refuses to start. A browser test sets DJANGO_ALLOW_ASYNC_UNSAFE for
that, as before; between browser tests the mark is taken away, so that the other tests of the
worker run as in a process that never started a browser, and put back before the next one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"  # vendored through package.json


class SharedBrowser:
    """The worker's playwright driver and chromium, started on first use (and again if the browser
    went away, e.g. crashed), stopped at the end of the session."""

    def __init__(self) -> None:
        self.playwright = None
        self.browser = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def enter(self):
        if self.loop is not None:
            asyncio._set_running_loop(self.loop)  # as playwright's last call left it
        if self.playwright is None:
            from playwright.sync_api import sync_playwright

            self.playwright = sync_playwright().start()
            self.loop = asyncio.get_running_loop()
        if self.browser is None or not self.browser.is_connected():
            self.browser = self.playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        return self.browser

    def leave(self) -> None:
        """Closes every context (and so every page) the test made; the browser stays."""
        try:
            for context in list(self.browser.contexts if self.browser is not None else ()):
                context.close()
        except Exception:  # noqa: BLE001 - a browser that cannot close a context is not reused
            self._close_browser()
        finally:
            asyncio._set_running_loop(None)

    def _close_browser(self) -> None:
        browser, self.browser = self.browser, None
        try:
            browser.close()
        except Exception:  # noqa: BLE001, S110 - it is gone already
            pass

    def stop(self) -> None:
        if self.playwright is None:
            return
        asyncio._set_running_loop(self.loop)
        try:
            if self.browser is not None:
                self._close_browser()
        finally:
            self.playwright.stop()  # ends the loop, which clears the running mark
            self.playwright = None
            asyncio._set_running_loop(None)


@pytest.fixture(scope="session")
def shared_chromium() -> Iterator[SharedBrowser]:
    shared = SharedBrowser()
    yield shared
    shared.stop()


@pytest.fixture
def chromium(shared_chromium, monkeypatch):
    """The worker's chromium, with no browser context open: make your own (`new_context` or
    `new_page`); every one left is closed when the test ends."""
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is missing: run scripts/system-deps.sh test")
    # ORM calls beside playwright's event loop in this thread (see the module's docstring).
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    try:
        browser = shared_chromium.enter()
        assert browser.contexts == [], "an earlier test's browser context is still open"
        yield browser
    finally:
        shared_chromium.leave()


def axe_serious(page) -> list[str]:
    """Serious and critical accessibility violations axe-core finds (contrast, labels, names)."""
    if not AXE.exists():
        pytest.fail("axe-core is missing: run `make test` (npm ci)")
    if not page.evaluate("() => typeof axe !== 'undefined'"):  # once per document
        page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    return [f"{v['id']}: {v['help']}" for v in result if v["impact"] in ("serious", "critical")]
