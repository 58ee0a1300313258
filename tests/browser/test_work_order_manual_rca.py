"""The work-order page, for what happened outside the Investigator's path: an operator records the
root cause they found on an order still `detected` (before, only the admin's RCA field or the API
could), and an order closed without a completion report says so instead of "Not completed yet"."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_up

pytestmark = pytest.mark.browser

ORDERS = """
from sentinel.models import Cell, Line, Site
from workorders.models import WorkOrder
site, _ = Site.objects.get_or_create(name="RCA page site")
line, _ = Line.objects.get_or_create(site=site, name="RCA page line")
cell, _ = Cell.objects.get_or_create(tag="RCA-01", defaults={"line": line, "name": "Pump RCA-01", "equipment_type": "centrifugal pump"})
detected = WorkOrder.objects.create(cell=cell, title="Noise at RCA-01", status="detected", priority="medium")
closed = WorkOrder.objects.create(cell=cell, title="Closed bare", status="completed", priority="low",
    rca_summary="seal_leak: drips at the seal")
print(detected.pk, closed.pk)
"""

CAUSE = "seal_leak: <img src=x onerror=alert(1)> mechanical seal faces scored"


def test_an_operator_records_the_root_cause_of_a_detected_order_on_its_page(page, aria_server):
    detected, closed = aria_server.manage("shell", "-c", ORDERS).strip().splitlines()[-1].split()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    sign_up(page, aria_server, "h2-rca", f"/workorders/{detected}/", "operator")

    page.locator(".btn-rca").click()
    page.locator(".btn-rca-confirm").click()  # nothing typed: said, nothing sent
    expect(page.locator("#wo-error")).to_contain_text("say what the root cause is")
    expect(page.locator("#wo-status")).to_have_text("detected")
    page.locator("textarea[name='rca_summary']").fill(CAUSE)
    page.locator(".btn-rca-confirm").click()

    expect(page.locator("#wo-status")).not_to_have_text("detected")  # analyzed, then open once the Generator wrote it
    expect(page.locator("#wo-rca .wo-rca-summary")).to_have_text(CAUSE)  # as text, never markup
    expect(page.locator("#wo-history")).to_contain_text("detected → analyzed · h2-rca")
    expect(page.locator(".btn-rca")).to_have_count(0)
    assert page.locator("#wo-rca img").count() == 0 and not dialogs

    page.goto(f"/workorders/{closed}/")
    expect(page.locator("#wo-report")).to_have_text("Completed without a report (closed from the admin or the API).")
    expect(page.locator("#wo-rca")).to_contain_text("never confirmed (completed without a completion report)")
    assert not page.console_errors, page.console_errors


def test_an_approver_is_not_offered_the_root_cause(page, aria_server):
    detected, _ = aria_server.manage("shell", "-c", ORDERS).strip().splitlines()[-1].split()
    sign_up(page, aria_server, "h2-rca-approver", f"/workorders/{detected}/", "approver")
    expect(page.locator("#wo-rca")).to_contain_text("Investigator at work")
    expect(page.locator(".btn-rca")).to_have_count(0)
