"""A plan whose only change an approver rejected at the gate does not read as a plain "completed" on
the Plans page: the status says "completed, not all applied" (not the green of a plan that made its
change) and the line under it says nothing was applied, which step and who rejected it; the limit
is unchanged. (The approved path, plain "completed", is test_gated_approval.)"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.test_gated_approval import GOAL, READ_LIMIT, RUN_PLANS, tab

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("rejected-change"), {"ARIA_ENGINE": "fake"})
    server.manage("seed_demo")
    server.create_user("rory", "rejected-operator-1", "operator")
    server.create_user("vera", "rejected-approver-1", "approver")
    yield server
    server.stop()


def test_a_change_rejected_at_the_gate_reads_as_nothing_applied(browser, server):
    operator = tab(browser, server, "rory", "rejected-operator-1")
    operator.fill("#plans-new input[name=goal]", GOAL)
    operator.click("#plans-new button[type=submit]")
    plan = operator.locator("article.plan").first
    expect(plan.locator(".plan-status")).to_have_text("draft")
    plan.get_by_role("button", name="Approve").click()
    expect(plan.locator(".plan-status")).to_have_text("approved")
    plan.get_by_role("button", name="Execute").click()
    expect(plan.locator(".plan-status")).to_have_text("running")
    server.manage("shell", "-c", RUN_PLANS)  # the read step runs, the gated change asks
    expect(plan.locator(".plan-status")).to_have_text("paused")
    expect(plan.locator(".plan-outcome")).to_have_count(0)

    approver = tab(browser, server, "vera", "rejected-approver-1")
    approver.locator("#plans-asks .ask").first.get_by_role("button", name="Reject").click()
    expect(approver.locator("#needs-me-badge")).to_be_hidden()
    server.manage("shell", "-c", RUN_PLANS)

    status = plan.locator(".plan-status")
    expect(status).to_have_text("completed, not all applied")
    expect(status).to_have_attribute("data-outcome", "not-all-applied")
    outcome = plan.locator(".plan-outcome")
    expect(outcome).to_contain_text("Nothing applied — step ")
    expect(outcome).to_contain_text("(sentinel.change_signal_limits): rejected by vera.")
    expect(plan.locator(".plan-result-skipped")).to_contain_text("Rejected by vera")
    assert server.manage("shell", "-c", READ_LIMIT).strip().splitlines()[-1] == "4.5"
    for page in (operator, approver):
        assert not [e for e in page.console_errors if "Content Security Policy" in e], page.console_errors
    operator.context.close()
    approver.context.close()
