"""The equipment page edits a short text that holds a line break (a nameplate note on two lines)
without changing it: a one-line input drops line breaks from its value, so such a text had to be
edited in a text area, or saving any other field rewrote it on one line."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_up

pytestmark = pytest.mark.browser

CELL = """
from sentinel.models import Cell, Line, Site
from workorders.models import EquipmentKB
site, _ = Site.objects.get_or_create(name="Lines site")
line, _ = Line.objects.get_or_create(site=site, name="Lines line")
cell, _ = Cell.objects.get_or_create(tag="LINES-01", defaults={"line": line, "name": "Lines pump", "equipment_type": "pump"})
data = {"equipment": {"manufacturer": "KSB", "plate": "Etanorm 65\\nS/N 4411"}}
EquipmentKB.objects.update_or_create(cell=cell, defaults={"data": data, "calibration_log": []})
print(cell.pk)
"""
READ = """
import json
from workorders.models import EquipmentKB
print(json.dumps(EquipmentKB.objects.get(cell__tag="LINES-01").data["equipment"], sort_keys=True))
"""


def test_saving_one_field_leaves_a_two_line_text_as_it_was(page, aria_server):
    cell = aria_server.manage("shell", "-c", CELL).strip().splitlines()[-1]
    sign_up(page, aria_server, "h1-lines-operator", f"/equipment/{cell}/", "operator")

    page.locator("#kb-edit").click()
    page.locator('tr[data-field="equipment.manufacturer"] .kb-input').fill("KSB SE")
    page.locator("#kb-save").click()
    expect(page.locator("#kb-saved")).to_have_text("Saved.")
    stored = json.loads(aria_server.manage("shell", "-c", READ).strip().splitlines()[-1])
    assert stored == {"manufacturer": "KSB SE", "plate": "Etanorm 65\nS/N 4411"}

    # nothing edited: nothing to save (the two-line text does not count as a change)
    page.locator("#kb-edit").click()
    page.locator("#kb-save").click()
    expect(page.locator("#kb-form-error")).to_have_text("Nothing changed.")
