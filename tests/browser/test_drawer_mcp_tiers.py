"""The drafts panel's tier picker in headless Chromium: an approver approving an MCP server draft
gives each of its tools a tier (preselected: what the spec declares, else mutate) and the approval
carries exactly those tiers — what the registry uses once it is published."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from core.sandbox import isolation_status
from tests.browser.live_server import start_live_server
from tests.browser.tabs import drawer_login, open_tab

pytestmark = pytest.mark.browser
SERVER = str(Path(__file__).resolve().parents[1] / "assistant" / "mcp_echo_server.py")
SPEC = {
    "transport": "stdio",
    "command": [sys.executable, SERVER],
    "tools": [
        {"name": "shout", "tier": "read", "input_schema": {"type": "object"}},
        {"name": "add", "input_schema": {"type": "object"}},
    ],
}
REVIEW = """
from assistant.models import Review
print(__import__("json").dumps(Review.objects.get(draft__name="echo").tool_tiers))
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not isolation_status().available:
        pytest.skip("sandbox unavailable: the MCP draft's test cannot run")
    extra = {"ARIA_ENGINE": "fake", "ARIA_SANDBOX_READ_ONLY_PATHS": SERVER}
    server = start_live_server(tmp_path_factory.mktemp("drawer-mcp-tiers"), extra)
    yield server
    server.stop()


def test_the_approver_picks_each_mcp_tools_tier_in_the_drawer(browser, server):
    erin = open_tab(browser, server)
    drawer_login(erin, server, "erin", "operator")
    erin.select_option("#aria-mode", "build")
    erin.locator(".aria-draft-create summary").click()
    erin.select_option("#aria-draft-type", "mcp_server")
    erin.fill("#aria-draft-name", "echo")
    erin.fill("#aria-draft-spec", json.dumps(SPEC))
    erin.get_by_role("button", name="Create draft").click()
    row = erin.locator("#aria-draft-list .aria-draft").first
    for button, status in (("Validate", "validated"), ("Test", "tested")):
        row.get_by_role("button", name=button).click()
        expect(row.locator(".aria-badge")).to_have_text(status, timeout=60_000)

    ann = open_tab(browser, server)
    drawer_login(ann, server, "ann", "approver", "operator")
    ann.select_option("#aria-mode", "build")
    waiting = ann.locator("#aria-review-list .aria-draft").first
    expect(waiting).to_contain_text("mcp_server echo v1")
    picks = waiting.locator(".aria-tiers select")
    expect(picks).to_have_count(2)
    expect(waiting.locator('select[name="shout"]')).to_have_value("read")  # as declared
    expect(waiting.locator('select[name="add"]')).to_have_value("mutate")  # nothing declared
    waiting.locator('select[name="shout"]').select_option("safe")
    waiting.locator('select[name="add"]').select_option("gated")
    waiting.get_by_role("button", name="Approve").click()
    expect(waiting.locator(".aria-badge")).to_have_text("approved")
    tiers = json.loads(server.manage("shell", "-c", REVIEW).strip().splitlines()[-1])
    assert tiers == {"shout": "safe", "add": "gated"}
    assert not ann.console_errors, ann.console_errors
