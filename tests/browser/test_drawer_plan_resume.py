"""The Ask ARIA drawer's plan card resumes a paused plan with nothing left to answer, as the Plans
page does (44827bb): before, the card offered no Resume, though the coordinator tells the user to
resume it and the API does (POST …/execute). A plan paused for an open ask gets none there either."""

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_in

pytestmark = pytest.mark.browser

PAUSED_PLAN_IN_HISTORY = """
from django.contrib.auth.models import User
from assistant.services.sessions import message_create, session_create
from orchestrator.models import Plan, PlanStep
from orchestrator.services.plans import plan_transition
owner = User.objects.get(username="{user}")
plan = Plan.objects.create(owner=owner, goal="Paused from the coordinator", status="approved")
PlanStep.objects.create(plan=plan, order=1, capability="workorders.get_work_orders", inputs={{}}, tier="read")
plan_transition(plan=plan, to_status="running", actor=owner)
plan_transition(plan=plan, to_status="paused", actor=owner, reason="paused from the coordinator")
session = session_create(owner=owner, mode="plan", title="Paused plan")
message_create(session=session, role="user", content=plan.goal)
message_create(session=session, role="assistant", content="Plan created.",
    metadata={{"plan_card": {{"component": "plan_card", "props": {{"id": plan.pk, "goal": plan.goal}}}}}})
"""


def test_the_drawer_plan_card_resumes_a_paused_plan(page, aria_server):
    aria_server.create_user("paula", "drawer-resume-pass-1", "operator")
    aria_server.manage("shell", "-c", PAUSED_PLAN_IN_HISTORY.format(user="paula"))
    sign_in(page, "paula", "drawer-resume-pass-1")

    page.click("#aria-history-toggle")
    page.locator("#aria-session-list .aria-link", has_text="Paused plan").click()
    card = page.locator("#aria-log .aria-plan-live").last
    expect(card.locator(".aria-plan-status")).to_contain_text("paused")
    card.get_by_role("button", name="Resume").click()

    expect(card.locator(".aria-plan-status")).to_contain_text("running")
    expect(card.get_by_role("button", name="Resume")).to_have_count(0)
    # No worker thread in this live server: run the executor as a worker process would, so no plan
    # is left running for the tests after this one.
    aria_server.manage(
        "shell", "-c",
        "from orchestrator.models import Plan\n"
        "from orchestrator.services.executor import plan_execute\n"
        "plan_execute(Plan.objects.get(status='running', owner__username='paula').pk)\n",
    )  # fmt: skip
    expect(card.locator(".aria-plan-status")).to_contain_text("completed")
