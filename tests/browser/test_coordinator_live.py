"""A coordinator turn in headless Chromium against the real server (daphne, embedded mode, the
offline engine): its live states arrive over the bus while it runs, the answer carries the
"offline demo engine" mark, and its transcript downloads as JSON with the hash chain."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import drawer_login

pytestmark = pytest.mark.browser
STATES = "Coordinator: inspecting → validating → executing → answered"
DETECTED_P02 = """
from sentinel.models import Cell
from workorders.models import WorkOrder
WorkOrder.objects.create(cell=Cell.objects.get(tag="P-02"), title="High vibration on P-02", status="detected",
    priority="high")
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("coord-live"), {"ARIA_ENGINE": "fake"})
    server.manage("seed_demo")
    server.manage("shell", "-c", DETECTED_P02)
    yield server
    server.stop()


def test_drawer_coordinator_turn_shows_live_states_and_the_offline_mark(page, server):
    drawer_login(page, server, "cleo", "operator")
    page.select_option("#aria-mode", "coordinate")
    page.fill("#aria-text", "What is going on with P-02?")
    page.click("#aria-send")

    answer = page.locator("#aria-log .aria-assistant").last
    # inspecting/validating/executing can only come from the bus frames: the response carries the end state
    expect(answer.locator(".coord-live")).to_have_text(STATES, timeout=45_000)  # a loaded machine
    expect(answer.locator(".coord-live")).to_have_attribute("data-state", "answered")
    expect(answer.locator(".aria-text")).to_contain_text("High vibration on P-02")
    # one mark on the answer (the drawer's own turn mark or the coordinator's, never both)
    expect(answer.locator(".offline-mark, .aria-offline-mark")).to_have_text(["offline demo engine"])

    # the details offer the transcript as JSON; the download is the owner's, chain included
    answer.locator("details.aria-coord-details summary").click()
    link = answer.locator(".turn-details-export a", has_text="the whole conversation")
    href = link.get_attribute("href")
    assert href.startswith("/api/v1/aria/coordinator/conversations/session-")
    export = page.request.get(href)
    assert export.ok
    turns = export.json()["turns"]
    assert turns[-1]["body"]["message"] == "What is going on with P-02?" and len(turns[-1]["hash"]) == 64
    assert turns[-1]["offline"] is True
    expect(answer.locator(".offline-mark, .aria-offline-mark")).to_have_count(1)  # still one, once all settled

    # reopened from history, the mark is still on the answer (looked up, not from the live frames)
    page.click("#aria-new")
    page.click("#aria-history-toggle")
    page.locator("#aria-session-list .aria-link", has_text="What is going on with P-02?").click()
    reopened = page.locator("#aria-log .aria-assistant").last
    expect(reopened.locator(".offline-mark, .aria-offline-mark")).to_have_text(["offline demo engine"])
    assert not page.console_errors, page.console_errors


def test_plans_page_coordinator_box_shows_live_states(page, server):
    drawer_login(page, server, "cato", "operator")
    page.goto("/plans/")
    page.fill("#coord-form input[name=message]", "What happened?")
    page.click("#coord-form button[type=submit]")
    turn = page.locator("#coord-turns .coord-turn").first
    expect(turn.locator(".coord-live")).to_have_text(STATES, timeout=45_000)
    expect(turn.locator(".coord-answer .offline-mark")).to_have_text("offline demo engine")
    assert not page.console_errors, page.console_errors


def test_plans_page_keeps_a_turn_sent_before_its_list_loaded(page, server):
    """The box's first load can come back after the user has sent a message (a slow server):
    the turn just answered stays on top with its live states, earlier turns go below it, and
    none shows twice. CI saw the load wipe a turn sent in that gap."""
    drawer_login(page, server, "cass", "operator")
    page.goto("/plans/")
    page.fill("#coord-form input[name=message]", "First question")
    page.click("#coord-form button[type=submit]")
    expect(page.locator("#coord-turns .coord-turn .coord-live")).to_have_attribute(
        "data-state", "answered", timeout=45_000
    )

    held = []  # the list's GET, held until the next turn has been answered
    page.route(
        "**/api/v1/aria/coordinator/turns",
        lambda route: held.append(route) if route.request.method == "GET" else route.continue_(),
    )
    page.reload()
    expect(page.locator("#coord-turns .coord-turn")).to_have_count(0)
    page.fill("#coord-form input[name=message]", "Second question")
    page.click("#coord-form button[type=submit]")
    turns = page.locator("#coord-turns .coord-turn")
    expect(turns.first.locator(".coord-live")).to_have_text(STATES, timeout=45_000)
    assert len(held) == 1
    held[0].continue_()

    expect(turns).to_have_count(2)
    expect(turns.locator(".coord-q")).to_have_text(["Second question", "First question"])
    expect(turns.first.locator(".coord-live")).to_have_text(STATES)
    assert not page.console_errors, page.console_errors
