"""A step about a cell is titled with the cell's tag on the Plans page ("Alarms of P-02"), as its
result names it, not with the row id ("Alarms of cell 2")."""

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_in

pytestmark = pytest.mark.browser
PLAN_ON_A_CELL = """
from django.contrib.auth.models import User
from orchestrator.models import Plan, PlanStep
from tests.workorders import factories as f
cell = f.make_cell("ST-91")
plan = Plan.objects.create(owner=User.objects.get(username="{user}"), goal="Alarms by tag for {user}")
PlanStep.objects.create(plan=plan, order=1, capability="workorders.get_signal_anomalies",
                        inputs={{"cell_id": cell.pk}}, tier="read")
print(cell.tag, cell.pk)
"""


def test_a_cell_step_is_titled_with_the_cell_tag(page, aria_server):
    user = "titles-tia"
    aria_server.create_user(user, "step-titles-pass-1", "operator")
    tag, cell_id = aria_server.manage("shell", "-c", PLAN_ON_A_CELL.format(user=user)).split()[-2:]
    sign_in(page, user, "step-titles-pass-1", next_path="/plans/")
    plan = page.locator("article.plan", has_text=f"Alarms by tag for {user}")
    expect(plan.locator(".step-title")).to_have_text(f"Alarms of {tag}")
    expect(plan).not_to_contain_text(f"Alarms of cell {cell_id}")
