"""Moving a plan needs the operator scope, and the Plans page says so instead of drawing buttons the
API refuses: an owner whose operator scope was taken away read Approve, Cancel, Stop step and an
autonomy select, and each answered 403 (bd4bfa5 made PATCH and poll refuse them too). An operator
still gets them."""

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_in

pytestmark = pytest.mark.browser

DRAFT_PLAN = """
from django.contrib.auth.models import User
from orchestrator.models import Plan, PlanStep
owner = User.objects.get(username="{user}")
plan = Plan.objects.create(owner=owner, goal="Drafted while {user} was an operator")
PlanStep.objects.create(plan=plan, order=1, capability="workorders.get_work_orders", inputs={{}}, tier="read")
"""


@pytest.mark.parametrize(
    ("user", "scope", "moves"), [("plscope-demi", "approver", False), ("plscope-otto", "operator", True)]
)
def test_plan_moves_are_drawn_only_for_operators(page, aria_server, user, scope, moves):
    aria_server.create_user(user, f"plans-scope-{user}-1", scope)
    aria_server.manage("shell", "-c", DRAFT_PLAN.format(user=user))
    sign_in(page, user, f"plans-scope-{user}-1", next_path="/plans/")

    plan = page.locator("article.plan", has_text=f"Drafted while {user}")
    expect(plan.locator(".plan-status")).to_have_text("draft")
    for name in ("Approve", "Cancel"):
        expect(plan.get_by_role("button", name=name)).to_have_count(1 if moves else 0)
    expect(plan.locator(".plan-scope-note")).to_have_count(0 if moves else 1)
    if moves:
        expect(plan.locator("select.plan-autonomy")).to_be_enabled()
    else:
        expect(plan.locator(".plan-scope-note")).to_contain_text("needs the operator scope")
        expect(plan.locator("select.plan-autonomy")).to_be_disabled()
