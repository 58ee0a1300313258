"""The technician picker on the work-order assign form names each shift by its weekday, as planners
pick them ("Tue 08/12, 06:00 – 14:00", Aria.fmtShift in static/aria/lib.js), in the viewer's
locale and time zone. It read "08/12/2026, 06:00 – 14:00" (Aria.fmtWindow) after the move to the
shared formatters, and "Mon 06:00–14:00" before. The browser here is in Asia/Kolkata (+05:30), so a
time drawn in UTC would not match."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_in

pytestmark = pytest.mark.browser

ORDER = """
from datetime import datetime, timedelta
from django.utils import timezone
from sentinel.models import Cell, Line, Site
from workorders.models import ShiftAssignment, WorkOrder
site, _ = Site.objects.get_or_create(name="Roster weekday site")
line, _ = Line.objects.get_or_create(site=site, name="Roster weekday line")
cell, _ = Cell.objects.get_or_create(tag="WD-01", defaults={"line": line, "name": "Pump WD-01", "equipment_type": "centrifugal pump"})
order = WorkOrder.objects.create(cell=cell, title="Noise at WD-01", status="open", priority="medium")
day = timezone.localdate() + timedelta(days=1)
start = datetime(day.year, day.month, day.day, 0, 30, tzinfo=timezone.get_current_timezone())
ShiftAssignment.objects.get_or_create(date=day, shift="morning", technician="h2b-roster-tech",
    defaults={"line": line, "starts_at": start, "ends_at": start + timedelta(hours=8)})
s = ShiftAssignment.objects.get(date=day, shift="morning", technician="h2b-roster-tech")
print(order.pk, s.starts_at.isoformat())
"""
KOLKATA = timedelta(hours=5, minutes=30)


def test_the_roster_names_each_shift_by_its_weekday_in_the_viewers_zone(browser, aria_server):
    order, starts_at = aria_server.manage("shell", "-c", ORDER).strip().splitlines()[-1].split()
    aria_server.create_user("h2b-roster-weekday", "h2b-roster-weekday-pw-1", "operator")
    context = browser.new_context(
        base_url=aria_server.url, viewport={"width": 1280, "height": 900}, timezone_id="Asia/Kolkata", locale="en-GB"
    )
    page = context.new_page()
    try:
        sign_in(page, "h2b-roster-weekday", "h2b-roster-weekday-pw-1", next_path=f"/workorders/{order}/")
        local = datetime.fromisoformat(starts_at).astimezone(UTC) + KOLKATA
        end = local + timedelta(hours=8)
        expected = f"{local:%a %d/%m}, {local:%H:%M} – {end:%H:%M}"
        end_iso = (datetime.fromisoformat(starts_at) + timedelta(hours=8)).isoformat()
        assert page.evaluate("([s, e]) => Aria.fmtShift(s, e)", [starts_at, end_iso]) == expected
        assert page.evaluate("() => Aria.fmtShift('not a time')") == "not a time"

        page.locator(".btn-assign").click()
        option = page.locator("select[name='shift_assignment_id'] option[data-technician='h2b-roster-tech']")
        # its conflict warnings (off_shift: the order has no window) follow the shift
        expect(option).to_have_text(re.compile("^" + re.escape(f"h2b-roster-tech · morning {expected}") + "( ⚠ .*)?$"))
    finally:
        context.close()
