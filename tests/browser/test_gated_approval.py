"""The gated approval path in the browser, on the seeded demo: an operator plans an alarm-limit
change on P-02, an approver — a different person — releases it, and the limit changes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import open_tab, sign_in

pytestmark = pytest.mark.browser
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "plans-gated-approval.png"
GOAL = "Raise the P-02 vibration alert limit to 4.8 mm/s because the new bearing runs warmer"
RUN_PLANS = (
    "from orchestrator.models import Plan\n"
    "from orchestrator.services.executor import plan_execute\n"
    "for plan in Plan.objects.filter(status='running'): plan_execute(plan.pk)\n"
)
READ_LIMIT = (
    "from sentinel.models import SignalDefinition\n"
    "print(SignalDefinition.objects.get(cell__tag='P-02', key='vibration_mm_s').alert)\n"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("gated"), {"ARIA_ENGINE": "fake"})
    server.manage("seed_demo")
    server.create_user("opal", "gated-operator-1", "operator")
    server.create_user("abby", "gated-approver-1", "approver")
    yield server
    server.stop()


def tab(browser, server, username, password):
    page = open_tab(browser, server)
    sign_in(page, username, password, next_path="/plans/")
    expect(page.locator("#plans-ws-status")).to_have_attribute("data-status", "open")
    return page


def test_an_operator_plans_a_limit_change_and_only_an_approver_releases_it(browser, server):
    operator = tab(browser, server, "opal", "gated-operator-1")
    operator.fill("#plans-new input[name=goal]", GOAL)
    operator.click("#plans-new button[type=submit]")
    plan = operator.locator("article.plan").first
    expect(plan.locator(".plan-status")).to_have_text("draft")
    change = plan.locator("li", has=operator.locator(".step-cap", has_text="sentinel.change_signal_limits"))
    # the step reads as what it will do; inputs left unset (keep) are not shown as nulls
    expect(change.locator(".step-inputs").first).to_contain_text("gated · cell_tag: P-02")
    expect(change.locator(".step-inputs").first).to_contain_text("alert: 4.8")
    expect(change.locator(".step-inputs").first).not_to_contain_text("null")
    plan.get_by_role("button", name="Approve").click()
    expect(plan.locator(".plan-status")).to_have_text("approved")
    operator.locator("article.plan").first.get_by_role("button", name="Execute").click()
    expect(operator.locator("article.plan .plan-status").first).to_have_text("running")
    server.manage("shell", "-c", RUN_PLANS)  # the worker's part: the read step runs, the gated one asks
    expect(operator.locator("article.plan .plan-status").first).to_have_text("paused")
    ask = operator.locator("article.plan .ask").first
    expect(ask).to_contain_text("Someone else must decide")  # only the owner is told so
    expect(ask.get_by_role("button", name="Approve")).to_have_count(0)  # never the owner's to release

    approver = tab(browser, server, "abby", "gated-approver-1")
    expect(approver.locator("#needs-me-badge")).to_have_text("1")
    waiting = approver.locator("#plans-asks .ask").first
    # the decision card: who asks, what changes (before → after, units), why, evidence, outcomes
    expect(waiting).to_contain_text("Approve: Change P-02 vibration (rms) alert limit 4.5 → 4.8 mm/s?")
    # the plan reference sits on the question's line, not on a line of its own above the card
    expect(waiting.locator(".decision-question")).to_have_text(
        re.compile(r"^plan #\d+ · Approve: Change P-02 vibration \(rms\) alert limit 4\.5 → 4\.8 mm/s\?$")
    )
    ref, question = waiting.locator(".plan-id").bounding_box(), waiting.locator(".decision-question").bounding_box()
    assert abs(ref["y"] - question["y"]) < ref["height"], (ref, question)
    expect(waiting.locator(".decision-asks")).to_contain_text("opal asks, for plan #")
    expect(waiting.locator(".decision-why")).to_have_text("Why: The new bearing runs warmer")
    expect(waiting.locator(".decision-evidence")).to_contain_text("on this signal in the last 7 days")
    expect(waiting.locator(".decision-evidence")).to_contain_text("Last 24 h:")
    expect(waiting.locator(".decision-reject")).to_contain_text("If rejected: The limits stay as they are")
    expect(waiting).not_to_contain_text("Someone else must decide")  # the intended approver just decides
    expect(waiting).not_to_contain_text("different approver")
    approver.screenshot(path=str(SCREENSHOT), full_page=True)
    waiting.get_by_role("button", name="Approve").click()
    expect(approver.locator("#needs-me-badge")).to_be_hidden()
    server.manage("shell", "-c", RUN_PLANS)
    expect(operator.locator("article.plan .plan-status").first).to_have_text("completed")
    assert server.manage("shell", "-c", READ_LIMIT).strip().splitlines()[-1] == "4.8"
    operator.context.close()
    approver.context.close()
