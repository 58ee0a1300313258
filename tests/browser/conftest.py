"""Browser tests: the real system (daphne subprocess, file SQLite, embedded mode) driven by
Playwright with Debian's Chromium. Skipped when /usr/bin/chromium is missing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.live_server import LiveServer, start_live_server

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


@pytest.fixture
def page(browser, aria_server):
    context = browser.new_context(base_url=aria_server.url, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()
