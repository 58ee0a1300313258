"""Coordinator mode in the Ask ARIA drawer, in headless Chromium against the real server (daphne,
embedded mode, the offline fake model): the answer, its compact line and expandable details."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import drawer_login, open_tab

pytestmark = pytest.mark.browser
COMPACT = re.compile(r"^ok · inspected \d+ tools? · \d+ actions? \(\d+ done\)$")

SETUP_P02 = """
from sentinel.models import Cell
from workorders.models import WorkOrder
cell = Cell.objects.get(tag="P-02")
WorkOrder.objects.create(cell=cell, title="High vibration on P-02", status="detected", priority="high")
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("ask-coordinator"), {"ARIA_ENGINE": "fake"})
    server.manage("seed_demo")
    server.manage("shell", "-c", SETUP_P02)
    yield server
    server.stop()


@pytest.fixture
def page(browser, server):
    """A tab on this module's server, from the one session-wide browser (tests/browser/conftest.py)."""
    page = open_tab(browser, server)
    yield page
    page.context.close()


login = drawer_login


def test_operator_asks_the_coordinator_and_expands_the_turn_details(page, server):
    login(page, server, "cora", "operator")
    page.select_option("#aria-mode", "coordinate")
    page.fill("#aria-text", "What is going on with P-02?")
    page.click("#aria-send")

    answer = page.locator("#aria-log .aria-assistant").last
    expect(answer.locator(".aria-text")).to_contain_text("High vibration on P-02")  # answered from the work order
    expect(answer.locator(".turn-details-line")).to_have_text(COMPACT)
    details = answer.locator("details.aria-coord-details")
    expect(details.locator(".turn-details-body")).to_be_hidden()  # compact until asked
    details.locator("summary").click()
    body = details.locator(".turn-details-body")
    expect(body.locator(".turn-details-title")).to_have_text(
        ["Inspected", "Selected actions", "Checks", "Result", "Plans"]
    )
    inspected = body.locator("ul").first
    expect(inspected.locator("li", has_text="find_cells")).to_have_count(1)  # tool → its result
    expect(inspected.locator("li", has_text="get_work_orders")).to_contain_text("→")
    expect(body).to_contain_text("✓ state #0")
    expect(body).to_contain_text("✓ answer")
    expect(page.locator("#aria-send")).to_have_text("Send")

    # reopened from history, the same turn shows the same compact line and details
    page.click("#aria-new")
    expect(page.locator("#aria-log .aria-row")).to_have_count(0)
    page.click("#aria-history-toggle")
    page.locator("#aria-session-list .aria-link", has_text="What is going on with P-02?").click()
    expect(page.locator("#aria-mode")).to_have_value("coordinate")
    reopened = page.locator("#aria-log .aria-assistant").last
    expect(reopened.locator(".turn-details-line")).to_have_text(COMPACT)
    reopened.locator("details.aria-coord-details summary").click()
    expect(reopened.locator(".turn-details-body")).to_contain_text("find_cells")
    assert not page.console_errors, page.console_errors
