"""The Plans page in headless Chromium against the real embedded server: draft → approve → execute,
the status arriving live over /ws/events; a gated ask shown to an approver."""

import pytest
from playwright.sync_api import expect


def login(tab, url, username, password):
    tab.goto("/login/?next=/plans/")
    tab.fill("#id_username", username)
    tab.fill("#id_password", password)
    tab.click("#login-submit")
    expect(tab).to_have_url(f"{url}/plans/")


@pytest.mark.browser
def test_plans_page_draft_approve_execute_live(page, aria_server):
    aria_server.create_user("pia", "plans-page-pass-1", "operator")
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    login(page, aria_server.url, "pia", "plans-page-pass-1")
    expect(page.locator("#plans-ws-status")).to_have_attribute("data-status", "open")
    expect(page.locator("#plans-empty")).to_be_visible()

    page.fill("#plans-new input[name=goal]", "What is on the <b>backlog</b>?")
    page.click("#plans-new button[type=submit]")
    plan = page.locator("article.plan").first
    expect(plan.locator(".plan-status")).to_have_text("draft")
    expect(plan.locator(".plan-goal")).to_have_text("What is on the <b>backlog</b>?")  # shown as text
    expect(plan.locator(".step-cap").first).to_have_text("workorders.get_work_orders")

    plan.get_by_role("button", name="Approve").click()
    expect(plan.locator(".plan-status")).to_have_text("approved")
    page.locator("article.plan").first.get_by_role("button", name="Execute").click()
    expect(page.locator("article.plan .plan-status").first).to_have_text("running")
    # This live server has no worker thread: run the executor as a separate worker process would;
    # the page learns of the outcome from plan_updated events (delivered by the outbox tail).
    aria_server.manage(
        "shell", "-c",
        "from orchestrator.models import Plan\n"
        "from orchestrator.services.executor import plan_execute\n"
        "plan_execute(Plan.objects.get(status='running', owner__username='pia').pk)\n",
    )  # fmt: skip
    expect(page.locator("article.plan .plan-status").first).to_have_text("completed")
    expect(page.locator("article.plan .step-status").first).to_have_text("done")

    # the coordinator box answers from inspected state; a turn expands to what it checked
    page.fill("#coord-form input[name=message]", "What happened?")
    page.click("#coord-form button[type=submit]")
    turn = page.locator("#coord-turns .coord-turn").first
    expect(turn.locator(".coord-answer")).to_contain_text("is completed")
    turn.locator("summary").click()
    expect(turn.locator(".coord-details")).to_contain_text("list_plans")
    expect(turn.locator(".coord-details")).to_contain_text("✓ state")
    assert not [e for e in errors if "Content Security Policy" in e]
