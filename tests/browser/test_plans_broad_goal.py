"""A broad goal on the Plans page (issue 11 item 2): "investigate all open alarms on line 1 and
prepare work orders" becomes per-alarm steps (investigate, then the repair order), and once the
workers ran, each step shows its result in words: root cause and confidence with a link to the
work order, then the repair order."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import drawer_login, open_tab, sign_in

pytestmark = pytest.mark.browser
GOAL = "Investigate all open alarms on line 1 and prepare work orders"
SEED = (
    "from sentinel.models import Cell, Line, Site\n"
    "from tests.workorders import factories as f\n"
    "for tag in ('P-01', 'P-02'):\n"
    "    alarm = f.make_alarm(f.make_signal(f.make_cell(tag)))\n"
    "    f.make_work_order(alarm.signal.cell, status='detected', triggered_by_alarm=alarm, title=f'{tag} vibration high')\n"
    "line2 = Line.objects.create(site=Site.objects.get(name='Test Plant'), name='Line 2')\n"
    "c05 = Cell.objects.create(line=line2, tag='C-05', name='Conveyor', equipment_type='conveyor')\n"
    "alarm = f.make_alarm(f.make_signal(c05))\n"
    "f.make_work_order(c05, status='detected', triggered_by_alarm=alarm, title='C-05 on line 2')\n"
)
WORK = (
    "from orchestrator.models import Plan\n"
    "from orchestrator.services.executor import plan_execute\n"
    "from orchestrator.services.jobs import plan_poll\n"
    "from workorders.models import WorkOrder\n"
    "from workorders.services.investigation import work_order_generate, work_order_investigate\n"
    "plan = Plan.objects.get(status='running', owner__username='bea')\n"
    "plan_execute(plan.pk)\n"
    "for wo in WorkOrder.objects.filter(status='detected', cell__tag__startswith='P-'):\n"
    "    work_order_investigate(work_order_id=wo.pk)\n"
    "for wo in WorkOrder.objects.filter(status='analyzed'):\n"
    "    work_order_generate(work_order_id=wo.pk)\n"
    "for _ in range(3):\n"
    "    plan_poll(plan.pk)\n"
    "    plan_execute(plan.pk)\n"
    "print(Plan.objects.get(pk=plan.pk).status)\n"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("broad"), {"ARIA_ENGINE": "fake"})
    server.manage("shell", "-c", SEED)
    server.create_user("bea", "broad-goal-pass-1", "operator")
    yield server
    server.stop()


def test_a_broad_goal_shows_per_alarm_steps_and_their_results(browser, server):
    page = open_tab(browser, server)
    sign_in(page, "bea", "broad-goal-pass-1", next_path="/plans/")
    expect(page.locator("#plans-ws-status")).to_have_attribute("data-status", "open")
    page.fill("#plans-new input[name=goal]", GOAL)
    page.click("#plans-new button[type=submit]")
    plan = page.locator("article.plan").first
    expect(plan.locator(".plan-status")).to_have_text("draft")
    titles = plan.locator(".step-title")
    expect(titles).to_have_count(4)
    expect(titles.nth(0)).to_have_text("Investigate WO-1")
    expect(titles.nth(1)).to_have_text("Repair order for WO-1")
    expect(titles.nth(2)).to_have_text("Investigate WO-2")
    expect(titles.nth(3)).to_have_text("Repair order for WO-2")
    expect(plan.locator(".plan-step").nth(1)).to_contain_text("after 1")
    expect(plan.locator(".plan-notes")).to_contain_text("line 1 is Line 1: P-01, P-02")
    expect(plan).not_to_contain_text("WO-3")  # line 2's alarm stays out

    plan.get_by_role("button", name="Approve").click()
    expect(plan.locator(".plan-status")).to_have_text("approved")
    page.locator("article.plan").first.get_by_role("button", name="Execute").click()
    expect(page.locator("article.plan .plan-status").first).to_have_text("running")
    assert server.manage("shell", "-c", WORK).strip().splitlines()[-1] == "completed"

    plan = page.locator("article.plan").first
    expect(plan.locator(".plan-status")).to_have_text("completed")
    first = plan.locator(".plan-step").nth(0)
    expect(first.locator(".plan-result-rca")).to_contain_text("Root cause:")
    expect(first.locator(".plan-result-rca")).to_contain_text("confidence")
    expect(first.locator("a.plan-wo-link")).to_have_attribute("href", "/workorders/1/")
    expect(plan.locator(".plan-step").nth(1).locator(".plan-result-repair")).to_contain_text("Repair order: WO-1")
    expect(plan.locator(".plan-step").nth(3).locator(".plan-result-repair")).to_contain_text("WO-2")
    expect(plan).not_to_contain_text("{")  # readable, not raw JSON
    page.screenshot(path="/tmp/h6_broad.png", full_page=True)
    page.context.close()


RUN = (
    "from orchestrator.models import Plan\n"
    "from orchestrator.services.executor import plan_execute\n"
    "for plan in Plan.objects.filter(status='running', owner__username='cy'): plan_execute(plan.pk)\n"
)


def test_a_choice_is_answered_on_the_page_and_a_waiting_step_is_skipped(browser, server):
    server.create_user("cy", "choice-pass-1", "operator")
    page = open_tab(browser, server)
    sign_in(page, "cy", "choice-pass-1", next_path="/plans/")
    expect(page.locator("#plans-ws-status")).to_have_attribute("data-status", "open")
    page.fill("#plans-new input[name=goal]", "Show the vibration of the pump")
    page.select_option("#plans-new select[name=autonomy]", "ask_all")
    page.click("#plans-new button[type=submit]")
    plan = page.locator("article.plan").first
    choice = plan.locator(".ask[data-kind=choice]")
    expect(choice).to_contain_text("Several cells are a pump. Which one did you mean?")
    expect(plan.get_by_role("button", name="Approve")).to_have_count(0)  # not before the choice
    choice.get_by_role("button", name="P-02").click()
    expect(plan.locator(".step-title")).to_have_text(["Signals of P-02"])  # the tag, not the id (ff33a9f)
    expect(plan.locator(".plan-guidance")).to_have_text("Guidance: the pump = P-02")
    expect(plan.locator(".plan-notes")).to_contain_text("the pump is P-02 (chosen by cy)")

    plan.get_by_role("button", name="Approve").click()
    expect(plan.locator(".plan-status")).to_have_text("approved")
    plan.get_by_role("button", name="Execute").click()
    server.manage("shell", "-c", RUN)  # ask_all: the read step asks first
    ask = plan.locator(".ask[data-kind=permission]")
    expect(ask.locator(".decision-question")).to_contain_text("Allow step 1: Latest value, state")
    expect(ask.locator(".decision-approve")).to_have_text(
        "If approved: Step 1 runs now as cy (read); the plan goes on."
    )
    plan.locator(".plan-step").first.get_by_role("button", name="Skip step").click()
    expect(plan.locator(".step-status").first).to_have_text("skipped")
    expect(plan.locator(".plan-result-skipped")).to_contain_text("Skipped by cy")
    server.manage("shell", "-c", RUN)
    expect(plan.locator(".plan-status")).to_have_text("completed")
    page.context.close()


def test_the_drawer_plan_card_asks_the_choice_and_shows_the_results(browser, server):
    page = open_tab(browser, server)
    drawer_login(page, server, "dee", "operator")
    page.select_option("#aria-mode", "plan")
    page.fill("#aria-text", "Show the vibration of the pump")
    page.click("#aria-send")
    card = page.locator("#aria-log .aria-plan-live").first
    expect(card.locator(".choice-ask")).to_contain_text("Several cells are a pump. Which one did you mean?")
    expect(card.get_by_role("button", name="Approve")).to_have_count(0)
    card.get_by_role("button", name="P-01").click()
    expect(card.locator(".aria-plan-steps li").first).to_contain_text("Signals of P-01")
    expect(card.locator(".plan-guidance")).to_have_text("Guidance: the pump = P-01")
    card.get_by_role("button", name="Approve").click()
    expect(card.locator(".aria-plan-status")).to_contain_text("approved")
    card.get_by_role("button", name="Execute").click()
    expect(card.locator(".aria-plan-status")).to_contain_text("running")
    server.manage(
        "shell", "-c",
        "from orchestrator.models import Plan\n"
        "from orchestrator.services.executor import plan_execute\n"
        "plan_execute(Plan.objects.get(status='running', owner__username='dee').pk)\n",
    )  # fmt: skip
    expect(card.locator(".aria-plan-status")).to_contain_text("completed")
    result = card.locator(".plan-result").first
    expect(result).to_contain_text("P-01: 1 signals")  # the read's summary, then its rows as a table
    expect(result.locator("table.plan-rows td").first).to_have_text("vibration_mm_s")
    assert not page.console_errors, page.console_errors
    page.context.close()
