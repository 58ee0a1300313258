"""One instant reads the same on every pane: the work-order page's history, its window and the
shared formatter (Aria.fmtDateTime, static/aria/lib.js) agree, in the viewer's locale and time
zone. The browser here is in Asia/Kolkata (+05:30), so a time drawn in UTC, or with the seconds a
bare toLocaleString adds, would not match."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_in

pytestmark = pytest.mark.browser

EVENT_AT = "2026-03-04T05:06:07+00:00"  # 10:36:07 in Kolkata
ORDER = f"""
from datetime import datetime, timedelta
from sentinel.models import Cell, Line, Site
from workorders.models import WorkOrder, WorkOrderEvent
site, _ = Site.objects.get_or_create(name="Time format site")
line, _ = Line.objects.get_or_create(site=site, name="Time format line")
cell, _ = Cell.objects.get_or_create(tag="TF-01", defaults={{"line": line, "name": "Pump TF-01", "equipment_type": "centrifugal pump"}})
at = datetime.fromisoformat("{EVENT_AT}")
order = WorkOrder.objects.create(cell=cell, title="Seal weep at TF-01", status="open", priority="medium",
    suggested_window_start=at, suggested_window_end=at + timedelta(hours=2))
event = WorkOrderEvent.objects.create(work_order=order, from_status="", to_status="open", note="raised")
WorkOrderEvent.objects.filter(pk=event.pk).update(created_at=at)
print(order.pk)
"""


def test_the_history_time_reads_as_the_shared_formatter_in_the_viewers_zone(browser, aria_server):
    order = aria_server.manage("shell", "-c", ORDER).strip().splitlines()[-1]
    aria_server.create_user("h4-time-format", "h4-time-format-pw-1", "operator")
    context = browser.new_context(
        base_url=aria_server.url, viewport={"width": 1280, "height": 900}, timezone_id="Asia/Kolkata", locale="en-GB"
    )
    page = context.new_page()
    try:
        sign_in(page, "h4-time-format", "h4-time-format-pw-1", next_path=f"/workorders/{order}/")
        stamp = page.locator("#wo-history .wo-history-item time").first
        shared = page.evaluate("(iso) => Aria.fmtDateTime(iso)", EVENT_AT)
        assert shared == "04/03/2026, 10:36"  # the viewer's zone, to the minute
        expect(stamp).to_have_text(shared)
        expect(stamp).to_have_attribute("datetime", EVENT_AT)  # the instant, machine-readable
        # The planned window starts at the same instant and reads the same way.
        expect(page.locator("#wo-plan .wo-facts")).to_contain_text(f"Window {shared} – 12:36")
        # So does the work-order card Ask ARIA draws (render.js), which used to cut the ISO text.
        card = page.evaluate(
            """([order, start, end]) => {
                 const host = document.createElement('div');
                 document.body.appendChild(host);
                 const wo = { id: order, cell_id: 1, cell_tag: 'TF-01', title: 'Seal weep', status: 'open',
                              priority: 'medium', suggested_window_start: start, suggested_window_end: end };
                 return AriaRender.drawInto(host, 'work_order_card', { cell_id: 1, work_order: wo }).textContent;
               }""",
            [int(order), EVENT_AT, "2026-03-04T07:06:07+00:00"],
        )
        assert f"Window {shared} – 12:36" in card, card
    finally:
        context.close()
