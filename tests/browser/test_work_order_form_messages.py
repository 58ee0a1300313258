"""The work-order execution forms say in words what is missing: Assign with no technician chosen
(before, the click did nothing) and Complete with no problem, cause or remedy chosen (before, the
server's answer was the code's regular expression). Nothing is sent until it is chosen."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_up

pytestmark = pytest.mark.browser

ORDER = """
from sentinel.models import Cell, Line, Site
from workorders.models import WorkOrder
site, _ = Site.objects.get_or_create(name="Form messages site")
line, _ = Line.objects.get_or_create(site=site, name="Form messages line")
cell, _ = Cell.objects.get_or_create(tag="FM-01", defaults={"line": line, "name": "Pump FM-01", "equipment_type": "centrifugal pump"})
order = WorkOrder.objects.create(cell=cell, title="Noise at FM-01", status="in_progress", priority="medium",
    rca_summary="bearing_wear: DE bearing worn", rca_details={"failure_mode": "bearing_wear"})
print(order.pk)
"""


def test_assign_and_complete_name_what_is_missing_and_send_nothing(page, aria_server):
    order = aria_server.manage("shell", "-c", ORDER).strip().splitlines()[-1]
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.method == "POST" else None)
    sign_up(page, aria_server, "h4-form-messages", f"/workorders/{order}/", "operator")

    page.locator(".btn-assign").click()
    roster = page.locator("select[name='shift_assignment_id']")
    expect(roster.locator("option").first).not_to_have_text("Loading the roster…")
    page.locator(".btn-assign-confirm").click()
    expect(page.locator("#wo-error")).to_have_text(f"Work order #{order}: choose a technician to assign.")

    page.locator(".btn-complete").click()
    page.locator("textarea[name='work_done']").fill("Replaced the DE bearing <b>and</b> regreased")
    page.locator("input[name='labour_hours']").fill("2")
    problem = page.locator("select[name='problem_code']")
    expect(problem.locator("option")).not_to_have_count(1)  # the codes arrived
    problem.select_option(index=1)
    page.locator(".btn-complete-confirm").click()
    expect(page.locator("#wo-error")).to_have_text(
        f"Work order #{order}: choose the cause, the remedy before completing."
    )
    expect(page.locator("#wo-status")).to_have_text("in_progress")
    assert not [url for url in sent if "/assign" in url or "/complete" in url], sent
    # what was typed is kept, and with the codes chosen the order completes
    expect(page.locator("textarea[name='work_done']")).to_have_value("Replaced the DE bearing <b>and</b> regreased")
    page.locator("select[name='cause_code']").select_option(index=1)
    page.locator("select[name='remedy_code']").select_option(index=1)
    page.locator("select[name='rca_verdict']").select_option("corrected")
    page.locator("textarea[name='actual_root_cause']").fill("Misalignment after the motor swap")
    page.locator(".btn-complete-confirm").click()
    expect(page.locator("#wo-error")).to_be_hidden()
    expect(page.locator("#wo-status")).to_have_text("completed")
    expect(page.locator("#wo-report")).to_contain_text("Replaced the DE bearing <b>and</b> regreased")


def test_complete_with_no_labour_hours_says_which_field_and_what_is_wanted(page, aria_server):
    """An empty Labour hours box was sent as 0 and answered 'Input should be greater than 0'."""
    order = aria_server.manage("shell", "-c", ORDER).strip().splitlines()[-1]
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.method == "POST" else None)
    sign_up(page, aria_server, "h4b-labour-hours", f"/workorders/{order}/", "operator")

    page.locator(".btn-complete").click()
    page.locator("textarea[name='work_done']").fill("Replaced the DE bearing")
    problem = page.locator("select[name='problem_code']")
    expect(problem.locator("option")).not_to_have_count(1)  # the codes arrived
    for name in ("problem_code", "cause_code", "remedy_code"):
        page.locator(f"select[name='{name}']").select_option(index=1)
    page.locator(".btn-complete-confirm").click()
    expect(page.locator("#wo-error")).to_have_text(
        f"Work order #{order}: give the labour hours (more than 0, up to 1000) before completing."
    )
    page.locator("input[name='labour_hours']").fill("0")
    page.locator(".btn-complete-confirm").click()
    expect(page.locator("#wo-error")).to_contain_text("give the labour hours")
    expect(page.locator("#wo-status")).to_have_text("in_progress")
    assert not [url for url in sent if "/complete" in url], sent

    page.locator("input[name='labour_hours']").fill("1.5")
    page.locator("select[name='rca_verdict']").select_option("corrected")  # as the test above
    page.locator("textarea[name='actual_root_cause']").fill("Misalignment after the motor swap")
    page.locator(".btn-complete-confirm").click()
    expect(page.locator("#wo-error")).to_be_hidden()
    expect(page.locator("#wo-status")).to_have_text("completed")
