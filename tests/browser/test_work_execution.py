"""Closing the loop in the browser (issue 12, "Done when"): as operator, acknowledge with a comment,
shelve until the order closes, assign, start and complete the order with a report that corrects
the cause; the alarm unshelves; the corrected cause is a confirmed failure in the next
investigation's context. The real system (`manage.py runaria`, fake engine) on seeded SQLite."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.live_server import ROOT
from tests.browser.test_control_room_p02 import PASSWORD, p02_ramp, system  # noqa: F401 - the module fixture

CORRECTION = "Coupling insert torn; pump and motor 0.4 mm out of line after the last motor swap."

PROMPT = """
import json
from core.models import AgentRun
from workorders.models import FailureHistory, WorkOrder
done = WorkOrder.objects.get(pk={done})
failure = FailureHistory.objects.get(work_order=done)
later = WorkOrder.objects.filter(cell=done.cell, pk__gt=done.pk).order_by("pk").first()
run = AgentRun.objects.filter(agent="investigator", subject_id=str(later.pk)).order_by("id").last() if later else None
print("PROMPT " + json.dumps({{"failure_id": failure.pk, "verification": failure.verification,
    "actual": failure.actual_failure_mode, "prompt": run.system_prompt if run else ""}}))
"""


def shell(server, code: str) -> dict:
    out = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", code],
        cwd=ROOT,
        env=server.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    return json.loads(next(line for line in out.splitlines() if line.startswith("PROMPT "))[7:])


@pytest.mark.browser
def test_operator_closes_the_loop_and_the_correction_becomes_memory(browser, system) -> None:  # noqa: F811
    server, setup = system
    auth = {"Authorization": f"Bearer {setup['token']}"}
    api = httpx.Client(base_url=server.url, headers=auth, timeout=30)
    context = browser.new_context(base_url=server.url, viewport={"width": 1440, "height": 1100})
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # Given the operator in the Control Room and P-02's vibration breaching its alert limit.
    page.goto("/login/")
    page.fill("#id_username", "cora")
    page.fill("#id_password", PASSWORD)
    page.click("#login-submit")
    expect(page.locator("#ws-status")).to_have_attribute("data-status", "open")
    clear = [{"signal_id": setup["signal_id"], "time": datetime.now(UTC).isoformat(), "value": 2.0}]
    api.post("/api/v1/signals/samples", json={"samples": clear})  # any earlier alarm clears first
    assert api.post("/api/v1/signals/samples", json={"samples": p02_ramp(setup["signal_id"])}).status_code == 200
    alarm = page.locator("#alarm-list .cr-alarm[data-state='active_unack']").first
    expect(alarm).to_be_visible()
    alarm_id = alarm.get_attribute("data-alarm-id")
    card = page.locator("#work-order-list article.wo").first
    expect(card).to_have_attribute("data-status", "open", timeout=90_000)
    order_id = int(card.get_attribute("data-work-order-id"))
    proposed = api.get(f"/api/v1/workorders/{order_id}").json()["rca_details"]["failure_mode"]
    actual = "misalignment" if proposed != "misalignment" else "imbalance"

    # When the operator acknowledges with a comment ...
    row = page.locator(f"#alarm-list .cr-alarm[data-alarm-id='{alarm_id}']")
    row.locator(".cr-alarm-comment").fill("Checked locally: humming at the DE bearing")
    row.locator(".btn-ack").click()
    expect(row).to_have_attribute("data-state", "acknowledged")
    assert (
        api.get(f"/api/v1/alarms/{alarm_id}").json()["acknowledge_comment"]
        == "Checked locally: humming at the DE bearing"
    )
    # ... shelves it until the order closes (the row says the limit it is judged against) ...
    expect(row.locator(".cr-alarm-detail")).to_contain_text("limit 4.50")
    row.locator(".cr-alarm-comment").fill("Waiting on the bearing job")  # shelving needs a reason
    row.locator(".btn-shelve-wo").click()
    expect(row).to_have_attribute("data-state", "shelved")
    assert api.get(f"/api/v1/alarms/{alarm_id}").json()["shelved_until_work_order_closes"] is True

    # ... assigns the order to a technician on shift, starts it ...
    card = page.locator(f"#work-order-{order_id}")
    card.locator(".btn-assign").click()
    roster = card.locator("select[name='shift_assignment_id']")
    expect(roster.locator("option[value]:not([value=''])").first).to_be_attached()
    # the first technician on shift in the work window (which entries come first depends on the time
    # of day: from 22:00 the night shift's are listed first, marked off_shift for a morning window)
    on_shift = roster.locator("option[value]:not([value=''])").filter(has_not_text="off_shift").first
    roster.select_option(on_shift.get_attribute("value"))
    card.locator(".btn-assign-confirm").click()
    expect(card.locator(".wo-assignee")).to_contain_text("Assigned to")
    card.locator(".btn-start").click()
    expect(card).to_have_attribute("data-status", "in_progress")

    # ... and completes it with a report that corrects the cause.
    card.locator(".btn-complete").click()
    form = card.locator(".wo-complete-form")
    form.locator("textarea[name='work_done']").fill("Laser-aligned pump and motor, replaced the coupling insert.")
    expect(form.locator(f"select[name='problem_code'] option[value='PUMP.{actual}']")).to_be_attached()
    form.locator("select[name='problem_code']").select_option(f"PUMP.{actual}")
    form.locator("select[name='cause_code']").select_option("FAB-ALIGN")
    form.locator("select[name='remedy_code']").select_option("ADJ")
    form.locator("select[name='rca_verdict']").select_option("corrected")
    form.locator("textarea[name='actual_root_cause']").fill(CORRECTION)
    for qty in form.locator("input[type='number'][data-ref]").all():
        qty.fill("0")
    form.locator("input[name='labour_hours']").fill("2.5")
    form.locator(".btn-complete-confirm").click()

    # Then the order is completed, the alarm unshelves, and the Control Room counts the correction.
    expect(page.locator(f"#work-order-{order_id}")).to_have_attribute("data-status", "completed", timeout=20_000)
    expect(page.locator(f"#alarm-list .cr-alarm[data-alarm-id='{alarm_id}']")).not_to_have_attribute(
        "data-state", "shelved", timeout=20_000
    )
    assert api.get(f"/api/v1/alarms/{alarm_id}").json()["state"] != "shelved"
    expect(page.locator("#rca-accuracy")).to_have_attribute("data-corrected", "1", timeout=20_000)

    # The work-order page shows the correction beside the proposal and links the printable order.
    page.goto(f"/workorders/{order_id}/")
    expect(page.locator("#wo-status")).to_have_attribute("data-status", "completed")
    expect(page.locator("#wo-rca .verdict-corrected")).to_contain_text(actual)
    expect(page.locator("#wo-report")).to_contain_text(CORRECTION)
    expect(page.locator("#wo-rca-accuracy")).to_contain_text("corrected 1")
    expect(page.locator("#wo-print-link")).to_have_attribute("href", f"/workorders/{order_id}/print")
    expect(page.locator("section#wo-evidence")).to_be_attached()

    # The next breach's investigation reads the corrected cause as a confirmed failure.
    later = datetime.now(UTC) + timedelta(seconds=5)
    back = [{"signal_id": setup["signal_id"], "time": later.isoformat(), "value": 2.0}]
    assert api.post("/api/v1/signals/samples", json={"samples": back}).status_code == 200
    again = [
        {"signal_id": setup["signal_id"], "time": (later + timedelta(seconds=30 * (i + 1))).isoformat(), "value": 5.2}
        for i in range(4)
    ]
    assert api.post("/api/v1/signals/samples", json={"samples": again}).status_code == 200
    found: dict = {}
    for _ in range(90):
        found = shell(server, PROMPT.format(done=order_id))
        if found["prompt"]:
            break
        page.wait_for_timeout(1000)
    assert (found["verification"], found["actual"]) == ("corrected", actual), found
    confirmed = found["prompt"].split("Confirmed failures", 1)[1].split("Unconfirmed RCA proposals", 1)[0]
    line = next(x for x in confirmed.splitlines() if x.startswith(f"- #{found['failure_id']} "))
    assert actual in line and "corrected by a technician" in line and "Coupling insert torn" in line, line

    assert not errors, errors
    context.close()
