"""The drawer's "ask, then run" in headless Chromium: in build mode (tool_approval=ask, the default)
the change an engineer asks for comes back as a confirm card (tool, arguments, before → after);
Confirm runs it on the server (the work order changes, an audit row is written; a second tab's
card follows over the bus), Reject declines
it; the session toggle switches to allow (persisted through the session route). The offline demo
engine is said: in the header and on the turn, whose details carry the session's correlation id; a
skill is pinned in the session from the drawer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import drawer_login, open_tab, sign_in

pytestmark = pytest.mark.browser
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "ask-aria-confirm.png"

ORDERS = """
from sentinel.models import Cell
from workorders.models import WorkOrder
cell = Cell.objects.get(tag="P-02")
ids = [WorkOrder.objects.create(cell=cell, title=t, status="open", priority="medium").pk for t in ("A", "B")]
print(ids[0], ids[1])
"""
STATE = """
import json
from assistant.models import Session
from core.models import AuditRecord
from workorders.models import WorkOrder
print(json.dumps({{
    "priorities": [WorkOrder.objects.get(pk=pk).priority for pk in ({a}, {b})],
    "confirm_audits": AuditRecord.objects.filter(action="assistant.tool_call.confirm").count(),
    "reject_audits": AuditRecord.objects.filter(action="assistant.tool_call.reject").count(),
    "approval": Session.objects.get(owner__username="olga").tool_approval,
    "correlation": Session.objects.get(owner__username="olga").correlation_id,
    "skills": Session.objects.get(owner__username="olga").skill_prefs,
}}))
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("drawer-confirm"), {"ARIA_ENGINE": "fake"})
    server.manage("seed_demo")
    yield server
    server.stop()


def state(server, a, b) -> dict:
    return json.loads(server.manage("shell", "-c", STATE.format(a=a, b=b)).strip().splitlines()[-1])


def ask(page, text):
    page.fill("#aria-text", text)
    page.click("#aria-send")
    expect(page.locator("#aria-send")).to_have_text("Send")
    return page.locator(".aria-assistant").last


def test_confirm_runs_the_held_change_reject_declines_and_the_toggle_persists(browser, server):
    a, b = server.manage("shell", "-c", ORDERS).strip().splitlines()[-1].split()
    page = open_tab(browser, server)
    drawer_login(page, server, "olga", "operator")
    expect(page.locator("#aria-offline")).to_be_visible()  # the header says the engine is offline
    page.select_option("#aria-mode", "build")
    expect(page.locator("#aria-build-settings")).to_be_visible()
    expect(page.locator("#aria-tool-approval")).to_have_value("ask")

    turn = ask(page, f"set the priority of work order {a} to high")
    card = turn.locator(".aria-confirm")
    expect(card).to_contain_text("Confirm change: update_work_order")
    expect(card.locator(".aria-confirm-args")).to_contain_text("work order id")
    expect(card.locator(".aria-confirm-changes")).to_have_text("priority: medium → high")
    expect(turn.locator(".aria-offline-mark")).to_have_text("offline demo engine")
    assert state(server, a, b)["priorities"] == ["medium", "medium"]  # nothing ran yet
    page.locator("#aria-drawer").screenshot(path=str(SCREENSHOT))

    other = open_tab(browser, server)  # the same engineer in a second tab, on the same session
    sign_in(other, "olga", "pw-olga-123456")
    other.click("#aria-history-toggle")
    other.locator("#aria-session-list .aria-link").first.click()
    twin = other.locator(f'.aria-confirm[data-call-id="{card.get_attribute("data-call-id")}"]')
    expect(twin.get_by_role("button", name="Confirm")).to_be_visible()

    card.get_by_role("button", name="Confirm").click()
    expect(card.locator(".aria-confirm-status")).to_contain_text("Ran")
    expect(twin.locator(".aria-confirm-status")).to_contain_text("Ran")  # over the bus
    expect(twin.get_by_role("button", name="Confirm")).to_have_count(0)
    other.context.close()
    expect(card.get_by_role("button", name="Confirm")).to_have_count(0)
    after = state(server, a, b)
    assert after["priorities"] == ["high", "medium"] and after["confirm_audits"] == 1

    turn.locator(".aria-turn-details summary").click()
    expect(turn.locator(".aria-correlation")).to_have_text(after["correlation"])

    second = ask(page, f"set the priority of work order {b} to critical").locator(".aria-confirm")
    second.get_by_role("button", name="Reject").click()
    expect(second.locator(".aria-confirm-status")).to_have_text("Declined")
    after = state(server, a, b)
    assert after["priorities"] == ["high", "medium"] and after["reject_audits"] == 1

    page.select_option("#aria-tool-approval", "allow")
    expect(page.locator("#aria-tool-approval-status")).to_contain_text("without asking")
    assert state(server, a, b)["approval"] == "allow"
    page.reload()  # the assistant page opens the drawer by itself
    page.click("#aria-history-toggle")
    page.locator("#aria-session-list .aria-link").first.click()
    expect(page.locator("#aria-tool-approval")).to_have_value("allow")
    expect(page.locator(".aria-confirm").first.locator(".aria-confirm-status")).to_contain_text("Ran")

    page.locator(".aria-skills summary").click()  # pin a skill in this session
    skill = page.locator('.aria-skill[data-skill="maintenance-domain"] select')
    expect(skill).to_have_value("auto")
    skill.select_option("pinned")
    expect(page.locator('.aria-skill[data-skill="maintenance-domain"] select')).to_have_value("pinned")
    assert state(server, a, b)["skills"] == {"pinned": ["maintenance-domain"], "disabled": []}
    assert not page.console_errors, page.console_errors
