"""The drawer's plan card marks a plan the offline demo engine drafted (planner `model` on the fake
engine) with the Plans page's "offline demo engine" mark (AriaPlanViews.offlineMark, one definition
for both); a heuristic plan, which ran no model, carries none."""

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_in

pytestmark = pytest.mark.browser

MODEL_PLAN_IN_HISTORY = """
from django.contrib.auth.models import User
from assistant.services.sessions import message_create, session_create
from orchestrator.services.plans import plan_create
owner = User.objects.get(username="pim")
plan = plan_create(owner=owner, goal="What is on the backlog today?", planner="model")
session = session_create(owner=owner, mode="plan", title="Offline plan")
message_create(session=session, role="user", content=plan.goal)
message_create(session=session, role="assistant", content="Plan created.",
    metadata={"plan_card": {"component": "plan_card", "props": {"id": plan.pk, "goal": plan.goal}}})
print("ENGINE", plan.engine)
"""


def test_the_drawer_plan_card_marks_a_plan_of_the_offline_engine(page, aria_server):
    aria_server.create_user("pim", "drawer-offline-pass-1", "operator")
    assert "ENGINE fake" in aria_server.manage("shell", "-c", MODEL_PLAN_IN_HISTORY)
    sign_in(page, "pim", "drawer-offline-pass-1")

    # plan mode drafts with the heuristic planner: no model ran, no mark
    page.select_option("#aria-mode", "plan")
    page.fill("#aria-text", "What is on the backlog?")
    page.click("#aria-send")
    heuristic = page.locator("#aria-log .aria-plan-live").last
    expect(heuristic.locator(".aria-plan-status")).to_contain_text("draft")
    expect(heuristic.locator(".offline-mark")).to_have_count(0)

    # the model plan's card, reopened from History, carries the Plans page's mark
    page.click("#aria-history-toggle")
    page.locator("#aria-session-list .aria-link", has_text="Offline plan").click()
    modelled = page.locator("#aria-log .aria-plan-live").last
    expect(modelled.locator(".aria-plan-status")).to_contain_text("draft")
    mark = modelled.locator(".aria-plan-status .offline-mark")
    expect(mark).to_have_text("offline demo engine")
    expect(mark).to_have_attribute("data-engine", "fake")
    expect(page.locator("#aria-log .aria-plan-live .offline-mark")).to_have_count(1)
