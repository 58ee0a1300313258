"""A held work order says why in words: the hold reason's label ("Other (see note)", not the code
"other") and the note given with the hold, as text (markup in it is not drawn), also after a reload."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_up

pytestmark = pytest.mark.browser

ORDER = """
from sentinel.models import Cell, Line, Site
from workorders.models import WorkOrder
site, _ = Site.objects.get_or_create(name="Hold note site")
line, _ = Line.objects.get_or_create(site=site, name="Hold note line")
cell, _ = Cell.objects.get_or_create(tag="HN-01", defaults={"line": line, "name": "Pump HN-01", "equipment_type": "centrifugal pump"})
order = WorkOrder.objects.create(cell=cell, title="Noise at HN-01", status="in_progress", priority="medium",
    rca_summary="bearing_wear: DE bearing worn", rca_details={"failure_mode": "bearing_wear"})
print(order.pk)
"""
NOTE = "Crane <b>booked</b> until Friday <img src=x onerror=alert(1)>"


def test_a_hold_shows_its_reason_label_and_note_as_text(page, aria_server):
    order = aria_server.manage("shell", "-c", ORDER).strip().splitlines()[-1]
    alerts: list[str] = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    sign_up(page, aria_server, "h4b-hold-note", f"/workorders/{order}/", "operator")

    page.locator(".btn-hold").click()
    page.locator("select[name='reason']").select_option("other")
    page.locator("input[name='note']").fill(NOTE)
    page.locator(".btn-hold-confirm").click()
    expect(page.locator("#wo-status")).to_have_text("on_hold")
    for _ in range(2):  # as the hold answered, and as the page reads it again
        expect(page.locator("#wo-execution .wo-hold")).to_have_text("On hold: Other (see note)")
        expect(page.locator("#wo-execution .wo-hold-note")).to_have_text(NOTE)
        expect(page.locator("#wo-execution b, #wo-execution img")).to_have_count(0)
        page.reload()
    assert alerts == []
