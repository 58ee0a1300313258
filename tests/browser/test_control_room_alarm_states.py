"""The Control Room's alarm rows say who did what: acknowledged by, shelved by / why / until, out of
service by / why / since (its own section); operators get Unshelve and Return to service, approvers
neither; a signed-in user with no scope gets the scope notice and the page reads nothing.

Alarms are set up through sentinel's services in a `manage.py shell` on the live server's database
(the shared session server: every test uses its own cell and users)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import open_tab, sign_in

HOSTILE = "<b id=injected>tech</b>: swapping sensor cable"

SETUP = """
import json
from django.contrib.auth.models import Group, User
from sentinel.services import alarm_acknowledge, alarm_put_out_of_service, alarm_shelve
from tests.workorders import factories as f

def user(name, scope):
    u = User.objects.create_user(name, password="pw-" + name + "-123456")
    u.groups.add(Group.objects.get_or_create(name=scope)[0])
    return u

op, tech = user({op!r}, "operator"), user({tech!r}, "operator")
cell = f.make_cell({tag!r})
acked = f.make_alarm(f.make_signal(cell, "vibration_mm_s"))
shelved = f.make_alarm(f.make_signal(cell, "bearing_temp_c", display_name="Bearing", unit="C", alert=80.0, trip=95.0), value=85.0)
out = f.make_alarm(f.make_signal(cell, "flow_m3_h", display_name="Flow", unit="m3/h", alert=40.0, trip=50.0), value=45.0)
alarm_acknowledge(alarm=acked, actor=op, comment="seen")
alarm_acknowledge(alarm=shelved, actor=op, comment="seen")
alarm_shelve(alarm=shelved, actor=tech, minutes=90, comment={reason!r})
alarm_put_out_of_service(alarm=out, actor=tech, comment="transmitter replaced: " + {reason!r})
print("SETUP " + json.dumps({{"acked": acked.pk, "shelved": shelved.pk, "out": out.pk}}))
"""


def _plant(server: Any, prefix: str) -> dict[str, int]:
    """A cell `prefix` with three alarms: acknowledged by <prefix>_op; acknowledged by <prefix>_op
    then shelved by <prefix>_tech; out of service (by <prefix>_tech). Returns their ids."""
    code = SETUP.format(op=f"{prefix}_op", tech=f"{prefix}_tech", tag=prefix.upper(), reason=HOSTILE)
    out = server.manage("shell", "-c", code)
    return json.loads(next(line for line in out.splitlines() if line.startswith("SETUP "))[6:])


def _row(page: Any, alarm_id: int) -> Any:
    return page.locator(f'.cr-alarm[data-alarm-id="{alarm_id}"]')


@pytest.mark.browser
def test_a_shelved_alarm_names_who_shelved_it_why_and_until_when(browser, aria_server) -> None:
    ids = _plant(aria_server, "as1")
    page = open_tab(browser, aria_server)
    sign_in(page, "as1_op", "pw-as1_op-123456", next_path="/")

    acked = _row(page, ids["acked"])
    expect(acked).to_have_attribute("data-state", "acknowledged")
    expect(acked.locator(".cr-alarm-detail")).to_contain_text("acknowledged by as1_op")

    shelved = page.locator(f'#alarm-list .cr-alarm[data-alarm-id="{ids["shelved"]}"]')
    expect(shelved).to_have_attribute("data-state", "shelved")
    detail = shelved.locator(".cr-alarm-detail")
    expect(detail).to_contain_text("shelved by as1_tech until ")
    assert "as1_op" not in detail.inner_text()  # the acknowledger did not shelve it
    # The reason is the operator's text, shown as text: the markup in it is not a tag on the page.
    expect(shelved.locator(".cr-alarm-reason")).to_have_text(f"Reason: {HOSTILE}")
    assert page.locator("#injected").count() == 0
    assert not [e for e in page.console_errors if "Content Security Policy" in e], page.console_errors
    page.context.close()


@pytest.mark.browser
def test_an_out_of_service_alarm_is_listed_in_its_own_section_with_who_why_and_since(browser, aria_server) -> None:
    ids = _plant(aria_server, "as2")
    page = open_tab(browser, aria_server)
    sign_in(page, "as2_op", "pw-as2_op-123456", next_path="/")

    expect(page.locator("#oos-section")).to_be_visible()
    out = page.locator(f'#oos-list .cr-alarm[data-alarm-id="{ids["out"]}"]')
    expect(out).to_have_attribute("data-state", "out_of_service")
    expect(out.locator(".cr-alarm-detail")).to_contain_text("out of service since ")
    expect(out.locator(".cr-alarm-detail")).to_contain_text("by as2_tech")
    expect(out.locator(".cr-alarm-reason")).to_have_text(f"Reason: transmitter replaced: {HOSTILE}")
    # It is not counted or listed among the active alarms.
    expect(page.locator(f'#alarm-list .cr-alarm[data-alarm-id="{ids["out"]}"]')).to_have_count(0)
    active = page.locator("#alarm-list .cr-alarm").count()
    expect(page.locator("#alarm-count")).to_have_text(str(active))
    assert page.locator("#injected").count() == 0
    page.context.close()


@pytest.mark.browser
def test_operators_unshelve_and_return_to_service_from_the_page_approvers_cannot(browser, aria_server) -> None:
    ids = _plant(aria_server, "as3")
    aria_server.create_user("as3_boss", "pw-as3_boss-123456", "approver")

    # An approver watches: the rows are there, the buttons are not.
    watcher = open_tab(browser, aria_server)
    sign_in(watcher, "as3_boss", "pw-as3_boss-123456", next_path="/")
    expect(_row(watcher, ids["shelved"])).to_have_attribute("data-state", "shelved")
    expect(_row(watcher, ids["out"])).to_have_attribute("data-state", "out_of_service")
    expect(watcher.locator(".btn-unshelve, .btn-return")).to_have_count(0)

    page = open_tab(browser, aria_server)
    sign_in(page, "as3_op", "pw-as3_op-123456", next_path="/")
    shelved, out = _row(page, ids["shelved"]), _row(page, ids["out"])
    expect(shelved.locator(".btn-unshelve")).to_have_count(1)
    expect(shelved.locator(".btn-shelve, .btn-ack")).to_have_count(0)
    expect(out.locator(".btn-return")).to_have_count(1)

    # Unshelve: the alarm is annunciated again as it was before (acknowledged), in this page at once
    # and in the approver's without a reload.
    shelved.locator(".btn-unshelve").click()
    expect(shelved).to_have_attribute("data-state", "acknowledged")
    expect(shelved.locator(".cr-alarm-detail")).to_contain_text("acknowledged by as3_op")
    expect(_row(watcher, ids["shelved"])).to_have_attribute("data-state", "acknowledged")

    # Return to service, with a comment: back among the active alarms, unacknowledged.
    out.locator(".cr-alarm-comment").fill("transmitter back")
    out.locator(".btn-return").click()
    back = page.locator(f'#alarm-list .cr-alarm[data-alarm-id="{ids["out"]}"]')
    expect(back).to_have_attribute("data-state", "active_unack")
    expect(page.locator(f'#oos-list .cr-alarm[data-alarm-id="{ids["out"]}"]')).to_have_count(0)
    expect(_row(watcher, ids["out"])).to_have_attribute("data-state", "active_unack")

    code = (
        "import json\nfrom sentinel.models import AlarmEvent\n"
        f"rows = AlarmEvent.objects.filter(alarm_id__in=[{ids['shelved']}, {ids['out']}],"
        " from_state__in=['shelved', 'out_of_service']).select_related('actor').order_by('id')\n"
        "print('HISTORY ' + json.dumps([[e.to_state, e.actor.username, e.comment] for e in rows]))\n"
    )
    printed = aria_server.manage("shell", "-c", code)
    history = json.loads(next(line for line in printed.splitlines() if line.startswith("HISTORY "))[8:])
    assert history == [["acknowledged", "as3_op", ""], ["active_unack", "as3_op", "transmitter back"]]
    assert not [e for e in page.console_errors + watcher.console_errors if "403" in e], page.console_errors
    watcher.context.close()
    page.context.close()


@pytest.mark.browser
def test_a_user_without_a_scope_gets_the_notice_and_the_page_reads_nothing(browser, aria_server) -> None:
    aria_server.create_user("as4_nobody", "pw-as4_nobody-123456")
    page = open_tab(browser, aria_server)
    reads: list[str] = []  # the plant reads of the Control Room, and anything refused
    page.on("request", lambda r: reads.append(r.url) if "/control-room/state" in r.url else None)
    page.on("response", lambda r: reads.append(f"{r.status} {r.url}") if r.status == 403 else None)
    sign_in(page, "as4_nobody", "pw-as4_nobody-123456", next_path="/")

    expect(page.locator("#cr-scope-notice")).to_contain_text("operator")
    expect(page.locator("#ws-status")).to_have_attribute("data-status", "forbidden")
    time.sleep(6.5)  # past the page's 5 s state refresh
    assert reads == []
    assert not [e for e in page.console_errors if "403" in e or "Forbidden" in e], page.console_errors
    page.context.close()
