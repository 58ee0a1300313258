"""Browser tests: the real system (daphne subprocess, file SQLite, embedded mode) driven by
Playwright with Debian's Chromium. Skipped when /usr/bin/chromium is missing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.live_server import LiveServer, start_live_server
from tests.browser.tabs import open_tab

CHROMIUM = Path(os.environ.get("ARIA_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(config, items):
    if CHROMIUM.exists():
        return
    skip = pytest.mark.skip(reason=f"{CHROMIUM} is missing (apt-get install chromium)")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def aria_server(tmp_path_factory) -> Iterator[LiveServer]:
    server = start_live_server(tmp_path_factory.mktemp("aria-browser"), {"ARIA_EVENTS_TAIL_SECONDS": "1"})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator:
    from playwright.sync_api import expect, sync_playwright

    # Assertions wait as long as actions do: on a loaded 2-core CI machine an agent's streamed
    # answer can take longer than Playwright's 5 s default (seen: the P-02 chat answer).
    expect.set_options(timeout=20_000)

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _server_of(request: pytest.FixtureRequest) -> LiveServer:
    """The module's own live server when it defines a `server` fixture, else the shared one."""
    return request.getfixturevalue("server" if hasattr(request.module, "server") else "aria_server")


@pytest.fixture
def page(browser, request):
    """A tab (tabs.open_tab: console errors collected) on the module's server, closed after the test."""
    page = open_tab(browser, _server_of(request))
    yield page
    page.context.close()


@pytest.fixture
def tabs(browser, request):
    """Opens tabs on the module's server (two people side by side), all closed after the test."""
    server, opened = _server_of(request), []

    def tab():
        opened.append(open_tab(browser, server))
        return opened[-1]

    yield tab
    for tab_page in opened:
        tab_page.context.close()
