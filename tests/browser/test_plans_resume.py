"""A paused plan with nothing left to answer (paused from the coordinator: "pause plan 4") resumes
from the Plans page. Before, the page offered only Cancel, though the API resumes it
(POST …/execute) and the coordinator's answer says "Resume it on the Plans page"."""

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_in


@pytest.mark.browser
def test_a_paused_plan_resumes_from_the_plans_page(page, aria_server):
    aria_server.create_user("rosa", "plans-resume-pass-1", "operator")
    aria_server.manage(
        "shell", "-c",
        "from django.contrib.auth.models import User\n"
        "from orchestrator.models import Plan, PlanStep\n"
        "from orchestrator.services.plans import plan_transition\n"
        "plan = Plan.objects.create(owner=User.objects.get(username='rosa'), goal='Paused by the coordinator',"
        " status='approved')\n"
        "PlanStep.objects.create(plan=plan, order=1, capability='workorders.get_work_orders', inputs={}, tier='read')\n"
        "plan_transition(plan=plan, to_status='running', actor=plan.owner)\n"
        "plan_transition(plan=plan, to_status='paused', actor=plan.owner, reason='paused from the coordinator')\n",
    )  # fmt: skip
    sign_in(page, "rosa", "plans-resume-pass-1", next_path="/plans/")

    plan = page.locator("article.plan", has_text="Paused by the coordinator")
    expect(plan.locator(".plan-status")).to_have_text("paused")
    plan.get_by_role("button", name="Resume").click()

    expect(plan.locator(".plan-status")).to_have_text("running")
    expect(plan.get_by_role("button", name="Resume")).to_have_count(0)
    # No worker thread in this live server: run the executor as a worker process would, so no plan
    # is left running for the tests after this one.
    aria_server.manage(
        "shell", "-c",
        "from orchestrator.models import Plan\n"
        "from orchestrator.services.executor import plan_execute\n"
        "plan_execute(Plan.objects.get(status='running', owner__username='rosa').pk)\n",
    )  # fmt: skip
    expect(plan.locator(".plan-status")).to_have_text("completed")


@pytest.mark.browser
def test_a_plan_paused_for_an_answer_has_no_resume(page, aria_server):
    """Paused because an ask is open: the answer resumes it, so the page offers no Resume."""
    aria_server.create_user("rudi", "plans-resume-pass-2", "operator")
    aria_server.manage(
        "shell", "-c",
        "from django.contrib.auth.models import User\n"
        "from orchestrator.models import Plan, PlanStep\n"
        "from orchestrator.services.executor import plan_execute\n"
        "from orchestrator.services.plans import plan_transition\n"
        "plan = Plan.objects.create(owner=User.objects.get(username='rudi'), goal='Waits for rudi',"
        " status='approved', autonomy='ask_all')\n"
        "PlanStep.objects.create(plan=plan, order=1, capability='workorders.get_work_orders', inputs={}, tier='read')\n"
        "plan_transition(plan=plan, to_status='running', actor=plan.owner)\n"
        "plan_execute(plan.pk)\n",
    )  # fmt: skip
    sign_in(page, "rudi", "plans-resume-pass-2", next_path="/plans/")

    plan = page.locator("article.plan", has_text="Waits for rudi")
    expect(plan.locator(".plan-status")).to_have_text("paused")
    expect(plan.locator(".plans-asks")).to_be_visible()
    expect(plan.get_by_role("button", name="Resume")).to_have_count(0)
