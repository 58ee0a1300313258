"""The Ask ARIA drawer in headless Chromium against the real server (daphne, embedded mode)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import drawer_login

pytestmark = pytest.mark.browser
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "ask-aria-drawer.png"

COMPACT = re.compile(r"^ok · inspected \d+ tools? · \d+ actions? \(\d+ done\)$")
DETECTED_P02 = """
from sentinel.models import Cell
from workorders.models import WorkOrder
WorkOrder.objects.create(cell=Cell.objects.get(tag="P-02"), title="High vibration on P-02", status="detected",
    priority="high")
"""
SETUP_P02 = """
from sentinel.models import Cell
from workorders.models import WorkOrder
cell = Cell.objects.get(tag="P-02")
vibration = cell.signals.get(key="vibration_mm_s")
WorkOrder.objects.create(cell=cell, title="P-02 vibration trip", status="analyzed", triggered_by_signal_def=vibration,
    rca_summary="Drive-end bearing wear: vibration rose past the 7.1 mm/s trip limit.")
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("ask-aria"), {"ARIA_ENGINE": "fake"})
    server.manage("seed_demo")
    server.manage("shell", "-c", SETUP_P02)
    yield server
    server.stop()


login = drawer_login


def test_operator_asks_why_p02_tripped(page, server):
    login(page, server, "olga", "operator")
    expect(page.locator("#aria-access .aria-scope-operator")).to_have_text("operator")
    page.fill("#aria-text", "Why did P-02 trip?")
    page.click("#aria-send")

    answer = page.locator(".aria-assistant").last
    expect(answer.locator(".aria-text")).to_contain_text("Drive-end bearing wear")
    expect(answer.locator(".aria-text")).to_contain_text("Sources:")
    expect(answer.locator(".aria-tool summary").first).to_contain_text("find_cells")  # the tag resolves first
    expect(answer.locator(".aria-handoff")).to_contain_text("operator_qa → investigator")
    expect(answer.locator(".aria-chart svg")).to_have_count(1)
    expect(answer.locator(".aria-chart figcaption")).to_contain_text("vibration_mm_s")
    expect(page.locator("#aria-send")).to_have_text("Send")
    # the tool rows expand to show the arguments and the server's short summary
    answer.locator(".aria-tool summary").first.click()
    expect(answer.locator(".aria-tool pre").first).to_be_visible()
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert not [e for e in page.console_errors if "Content Security Policy" in e], page.console_errors


def test_engineer_drafts_validates_and_tests_a_prompt(page, server):
    login(page, server, "erin", "operator")
    page.select_option("#aria-mode", "build")
    page.fill("#aria-text", 'Write a prompt for the investigator: "Check {{focus}} first."')
    page.click("#aria-send")
    draft = page.locator("#aria-draft-list .aria-draft").first
    expect(draft).to_contain_text("prompt investigator_prompt v1")
    expect(draft.locator(".aria-badge")).to_have_text("draft")
    draft.get_by_role("button", name="Validate").click()
    expect(draft.locator(".aria-badge")).to_have_text("validated")
    draft.get_by_role("button", name="Test").click()
    expect(draft.locator(".aria-badge")).to_have_text("tested")
    expect(draft).to_contain_text("waiting for approval")
    expect(draft.locator(".aria-report summary").last).to_have_text("tests: passed")
    # an approver decides elsewhere (another process, like the admin): the badge follows the bus
    server.manage(
        "shell", "-c",
        "from django.contrib.auth.models import Group, User\n"
        "from assistant.models import Draft\n"
        "from assistant.services.drafts import draft_approve\n"
        "ann = User.objects.create_user('ann-approver')\n"
        "ann.groups.add(Group.objects.get_or_create(name='approver')[0])\n"
        "draft_approve(draft=Draft.objects.get(owner__username='erin'), actor=ann)\n",
    )  # fmt: skip
    expect(draft.locator(".aria-badge")).to_have_text("approved")


def test_plan_mode_card_approves_and_executes_live(page, server):
    """The inline plan card is live: Approve and Execute on the card, status from the bus."""
    login(page, server, "pavel", "operator")
    page.select_option("#aria-mode", "plan")
    page.fill("#aria-text", "What is on the work order backlog?")
    page.click("#aria-send")
    card = page.locator("#aria-log .aria-plan-live")
    expect(card.locator(".aria-plan-status")).to_contain_text("draft")
    card.get_by_role("button", name="Approve").click()
    expect(card.locator(".aria-plan-status")).to_contain_text("approved")
    card.get_by_role("button", name="Execute").click()
    expect(card.locator(".aria-plan-status")).to_contain_text("running")
    # No worker thread in this live server: run the executor as a worker process would; the card
    # learns of the outcome from plan_updated on the bus.
    server.manage(
        "shell", "-c",
        "from orchestrator.models import Plan\n"
        "from orchestrator.services.executor import plan_execute\n"
        "plan_execute(Plan.objects.get(status='running').pk)\n",
    )  # fmt: skip
    expect(card.locator(".aria-plan-status")).to_contain_text("completed")
    expect(card.locator(".aria-plan-steps .aria-status-done")).to_have_count(1)
    assert not page.console_errors, page.console_errors


def test_a_user_without_the_operator_scope_is_told_why_there_is_no_chat(page, server):
    # The chat would refuse (4403 on the socket, 403 on /sessions): no Send is drawn, a note says why.
    login(page, server, "vera", "approver")
    expect(page.locator("#aria-operator-note")).to_contain_text("needs the operator scope")
    expect(page.locator("#aria-send")).to_have_count(0)
    expect(page.locator("#aria-text")).to_have_count(0)


def test_settings_show_engine_model_and_reasoning_read_only_for_an_operator(page, server):
    login(page, server, "sam", "operator")
    page.click("#aria-settings-toggle")
    readiness = page.locator("#aria-readiness")
    expect(readiness).to_contain_text("fake (fake)")
    expect(readiness.locator("dt", has_text="model")).to_have_count(1)  # the effective model was not shown
    expect(readiness.locator("dt", has_text="reasoning")).to_have_count(1)
    # governance settings are the admin's: the operator reads them and cannot edit or save
    expect(page.locator("#aria-settings-status")).to_contain_text("only an admin can change")
    expect(page.locator("#aria-settings-form input[name=engine]")).to_be_disabled()
    expect(page.locator("#aria-settings-form button[type=submit]")).to_be_disabled()


def test_operator_asks_the_coordinator_and_expands_the_turn_details(page, server):
    """Coordinator mode: the answer, its compact line and expandable details (runs last here: it adds
    a detected work order on P-02)."""
    server.manage("shell", "-c", DETECTED_P02)
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
    page.screenshot(path=str(SCREENSHOT.with_name("ask-aria-coordinator.png")), full_page=True)
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

    # new work asked for in coordinator mode comes back as a live plan card, like plan mode's
    page.fill(
        "#aria-text", "Plan: raise the P-02 vibration alert limit to 4.8 mm/s because the new bearing runs warmer"
    )
    page.click("#aria-send")
    drafted = page.locator("#aria-log .aria-assistant").last
    expect(drafted.locator(".aria-text")).to_contain_text("waits for your approval")
    card = drafted.locator(".aria-plan-live")
    expect(card.locator(".aria-plan-status")).to_contain_text("draft")
    expect(card).to_contain_text("sentinel.change_signal_limits")
    card.get_by_role("button", name="Approve").click()
    expect(card.locator(".aria-plan-status")).to_contain_text("approved")
    assert not page.console_errors, page.console_errors


def test_the_ask_aria_page_leaves_room_for_its_open_drawer(page, server):
    """The drawer opened over the page: the how-to text ran under it and the top bar's user and
    Log out were hidden behind it (the drawer is fixed, the page kept its full width)."""
    login(page, server, "hana", "operator")
    drawer = page.locator("#aria-drawer").bounding_box()
    howto = page.locator("main .panel").first.bounding_box()
    assert howto["x"] + howto["width"] <= drawer["x"] + 1, (howto, drawer)
    logout = page.get_by_role("button", name="Log out")
    box = logout.bounding_box()
    assert box["x"] + box["width"] <= drawer["x"] + 1, (box, drawer)
    on_top = page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).textContent.trim()",
        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
    )
    assert on_top == "Log out"
    # closed, the page has the whole width again
    page.click("#aria-close")
    expect(page.locator("#aria-drawer")).to_be_hidden()
    wide = page.locator("main .panel").first.bounding_box()
    assert wide["x"] + wide["width"] > drawer["x"] + 100
