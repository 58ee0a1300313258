"""Browser tabs on a live server, shared by the browser tests: a fresh context per tab, console
errors collected on `page.console_errors`, and signing in through the real login form."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect


def open_tab(browser: Any, server: Any, *, height: int = 900, timeout_ms: int = 20_000) -> Any:
    context = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": height})
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.console_errors = errors
    return page


def sign_in(page: Any, username: str, password: str, *, next_path: str = "/assistant/") -> None:
    page.goto(f"/login/?next={next_path}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#login-submit")
    expect(page).to_have_url(re.compile(re.escape(next_path) + "$"))
    # The URL changes when the navigation commits; the page's deferred scripts (the `Aria` global
    # the tests call) have run only once the document is parsed (CI, loaded: "Aria is not defined").
    page.wait_for_load_state("domcontentloaded")


def sign_up(page: Any, server: Any, username: str, next_path: str, *scopes: str, password: str = "") -> None:
    """Create `username` with `scopes` on `server` and sign in, landing on `next_path`."""
    password = password or f"pw-{username}-123456"
    server.create_user(username, password, *scopes)
    sign_in(page, username, password, next_path=next_path)


def drawer_login(page: Any, server: Any, username: str, *scopes: str) -> None:
    """Create `username` with `scopes`, sign in and wait for the Ask ARIA drawer."""
    sign_up(page, server, username, "/assistant/", *scopes)
    expect(page.locator("#aria-drawer")).to_be_visible()
