"""Out of service from the Control Room: an operator puts an alarm out of service with a reason
(a blank one is refused on the page), finds it in the out-of-service section (filtered by cell),
and returns it to service; an approver watching sees each move without a reload and gets no
buttons. An alarm whose signal is disabled says so instead of offering Return to service.

Alarms are set up through sentinel's services in a `manage.py shell` on the live server's database
(the shared session server: this test uses its own cell and users)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import open_tab, sign_in

SETUP = """
import json
from sentinel.services import alarms_out_of_service_for_unevaluated
from tests.workorders import factories as f

cell = f.make_cell("OOS-7")
live = f.make_alarm(f.make_signal(cell, "vibration_mm_s", display_name="Vibration"))
retired = f.make_signal(cell, "flow_m3_h", display_name="Flow", unit="m3/h", alert=40.0, trip=50.0)
parked = f.make_alarm(retired, value=45.0)
retired.enabled = False
retired.save()
alarms_out_of_service_for_unevaluated(signal_ids=[retired.pk], actor=None, reason="signal OOS-7 flow_m3_h disabled in the admin by root")
print("SETUP " + json.dumps({"live": live.pk, "parked": parked.pk}))
"""

HISTORY = """
import json
from core.models import AuditRecord, Event
from sentinel.models import AlarmEvent
a = {alarm}
rows = AlarmEvent.objects.filter(alarm_id=a).exclude(from_state="").select_related("actor").order_by("id")
audits = AuditRecord.objects.filter(target_type="sentinel.alarm", target_id=str(a)).order_by("pk")
bus = Event.objects.filter(type="alarm_changed", payload__alarm_id=a).order_by("id")
print("HISTORY " + json.dumps({{
    "moves": [[e.to_state, e.actor.username, e.comment] for e in rows],
    "audits": [r.action for r in audits],
    "bus": [e.payload["action"] for e in bus],
}}))
"""


def _history(server: Any, alarm_id: int) -> dict:
    printed = server.manage("shell", "-c", HISTORY.format(alarm=alarm_id))
    return json.loads(next(line for line in printed.splitlines() if line.startswith("HISTORY "))[8:])


@pytest.mark.browser
def test_an_operator_puts_an_alarm_out_of_service_and_returns_it(browser, aria_server) -> None:
    printed = aria_server.manage("shell", "-c", SETUP)
    ids = json.loads(next(line for line in printed.splitlines() if line.startswith("SETUP "))[6:])
    aria_server.create_user("oos7_op", "pw-oos7_op-123456", "operator")
    aria_server.create_user("oos7_boss", "pw-oos7_boss-123456", "approver")

    watcher = open_tab(browser, aria_server)
    sign_in(watcher, "oos7_boss", "pw-oos7_boss-123456", next_path="/")
    expect(watcher.locator(f'#alarm-list .cr-alarm[data-alarm-id="{ids["live"]}"]')).to_be_visible()
    expect(watcher.locator(".btn-oos, .btn-return")).to_have_count(0)  # approvers watch only

    page = open_tab(browser, aria_server)
    sign_in(page, "oos7_op", "pw-oos7_op-123456", next_path="/")
    live = page.locator(f'#alarm-list .cr-alarm[data-alarm-id="{ids["live"]}"]')
    expect(live).to_have_attribute("data-state", "active_unack")

    # A reason is required: a blank one is refused on the page and the alarm stays put.
    live.locator(".btn-oos").click()
    expect(page.locator("#alarm-error")).to_contain_text("reason")
    expect(live).to_have_attribute("data-state", "active_unack")

    live.locator(".cr-alarm-comment").fill("transmitter out for calibration")
    live.locator(".btn-oos").click()
    out = page.locator(f'#oos-list .cr-alarm[data-alarm-id="{ids["live"]}"]')
    expect(out).to_have_attribute("data-state", "out_of_service")
    expect(out.locator(".cr-alarm-reason")).to_have_text("Reason: transmitter out for calibration")
    expect(out.locator(".cr-alarm-detail")).to_contain_text("by oos7_op")
    expect(page.locator(f'#alarm-list .cr-alarm[data-alarm-id="{ids["live"]}"]')).to_have_count(0)
    expect(page.locator("#alarm-error")).to_be_hidden()
    expect(watcher.locator(f'#oos-list .cr-alarm[data-alarm-id="{ids["live"]}"]')).to_be_visible()  # no reload

    # The section filters by cell or signal: the operator finds this cell's alarms among the plant's.
    page.locator("#oos-filter").fill("oos-7")
    expect(page.locator("#oos-list .cr-alarm")).to_have_count(2)
    page.locator("#oos-filter").fill("no such cell")
    expect(page.locator("#oos-list .cr-alarm")).to_have_count(0)
    expect(page.locator("#oos-empty")).to_be_visible()
    page.locator("#oos-filter").fill("OOS-7 flow")
    parked = page.locator(f'#oos-list .cr-alarm[data-alarm-id="{ids["parked"]}"]')
    expect(page.locator("#oos-list .cr-alarm")).to_have_count(1)
    # Its signal is disabled: nothing would clear it back in service, so the page says what to do.
    expect(parked.locator(".cr-alarm-reason")).to_contain_text("disabled in the admin by root")
    expect(parked.locator(".btn-return")).to_have_count(0)
    expect(parked.locator(".cr-alarm-note")).to_contain_text("enable it in the admin")
    page.locator("#oos-filter").fill("")

    # Return to service: annunciated again (its value is still over the limit), here and for the watcher.
    out.locator(".cr-alarm-comment").fill("calibrated")
    out.locator(".btn-return").click()
    expect(live).to_have_attribute("data-state", "active_unack")
    expect(page.locator(f'#oos-list .cr-alarm[data-alarm-id="{ids["live"]}"]')).to_have_count(0)
    expect(watcher.locator(f'#alarm-list .cr-alarm[data-alarm-id="{ids["live"]}"]')).to_have_attribute(
        "data-state", "active_unack"
    )

    history = _history(aria_server, ids["live"])
    assert history["moves"] == [
        ["out_of_service", "oos7_op", "transmitter out for calibration"],
        ["active_unack", "oos7_op", "calibrated"],
    ]
    assert history["audits"][-2:] == ["alarm.out_of_service", "alarm.return_to_service"]
    assert history["bus"][-2:] == ["out_of_service", "return_to_service"]
    assert not [e for e in page.console_errors + watcher.console_errors if "403" in e], page.console_errors
    watcher.context.close()
    page.context.close()
