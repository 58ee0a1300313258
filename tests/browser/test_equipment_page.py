"""The equipment page: an operator follows a cell's link from the Control Room to its equipment
knowledge, edits values in place and saves them (the page re-reads and shows them, the calibration
log names who and why), sees the server's refusal beside the field it names (nothing written), and a
change someone made meanwhile refused rather than overwritten. Markup in a KB value stays text."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_up

pytestmark = pytest.mark.browser

HOSTILE = "<img src=x onerror=window.pwned=1>"
CELL = """
from sentinel.models import Cell, Line, Site, SignalDefinition
from workorders.demo_kb import kb_for
from workorders.models import EquipmentKB
site, _ = Site.objects.get_or_create(name="KB site")
line, _ = Line.objects.get_or_create(site=site, name="KB line")
cell, _ = Cell.objects.get_or_create(tag="KB-01", defaults={"line": line, "name": "Feed pump", "equipment_type": "pump"})
SignalDefinition.objects.get_or_create(cell=cell, key="vibration_mm_s", defaults={"display_name": "Vibration", "unit": "mm/s"})
data = kb_for("pump")
data["equipment"]["seal"] = HOSTILE
EquipmentKB.objects.update_or_create(cell=cell, defaults={"data": data, "calibration_log": []})
print(cell.pk)
""".replace("HOSTILE", repr(HOSTILE))
READ = """
from workorders.models import EquipmentKB
kb = EquipmentKB.objects.get(cell__tag="KB-01")
print(kb.data["equipment"]["manufacturer"], kb.data["spare_parts"][0]["on_hand"], len(kb.calibration_log), sep="|")
"""
MEANWHILE = """
from django.contrib.auth.models import User
from sentinel.models import Cell
from workorders.services import equipment_kb_update
equipment_kb_update(cell=Cell.objects.get(tag="KB-01"), patch={"notes": "meanwhile"}, actor=None, note="agent")
"""


def read(server) -> list[str]:
    return server.manage("shell", "-c", READ).strip().splitlines()[-1].split("|")


def test_an_operator_edits_the_equipment_knowledge_of_a_cell(page, aria_server):
    cell = aria_server.manage("shell", "-c", CELL).strip().splitlines()[-1]
    sign_up(page, aria_server, "h1-kb-operator", "/", "operator")

    link = page.locator(f'.trend[data-cell-id="{cell}"] a.trend-cell-link')
    expect(link).to_have_text("KB-01")
    link.click()
    expect(page).to_have_url(f"{aria_server.url}/equipment/{cell}/")
    expect(page.locator("#kb-heading")).to_have_text("KB-01 · Feed pump")
    manufacturer = page.locator('tr[data-field="equipment.manufacturer"]')
    expect(manufacturer.locator(".kb-text")).to_have_text("KSB")
    expect(page.locator('tr[data-field="equipment.seal"] .kb-text')).to_have_text(HOSTILE)
    expect(page.locator("#kb-log")).to_have_count(0)

    # an edit, saved with a note: the page re-reads and shows it, and who changed it and why
    page.locator("#kb-edit").click()
    manufacturer.locator(".kb-input").fill("KSB SE & Co. <b>KGaA</b>")
    page.locator("#kb-note").fill("nameplate read on the round")
    page.locator("#kb-save").click()
    expect(page.locator("#kb-saved")).to_have_text("Saved.")
    expect(manufacturer.locator(".kb-text")).to_have_text("KSB SE & Co. <b>KGaA</b>")
    expect(manufacturer.locator(".kb-input")).to_be_hidden()
    expect(page.locator("#kb-updated")).to_contain_text("by h1-kb-operator: “nameplate read on the round”")
    expect(page.locator("#kb-log tbody tr").first).to_contain_text("nameplate read on the round")
    assert read(aria_server) == ["KSB SE & Co. <b>KGaA</b>", "2", "1"]

    # a stock the server refuses: its message beside the field, nothing written (not the name either)
    page.locator("#kb-edit").click()
    part = page.locator('tr[data-ref="SKF-6310-2Z-C3"]')
    part.locator('.kb-input[data-kind="number"]').fill("-3")
    manufacturer.locator(".kb-input").fill("Other")
    page.locator("#kb-save").click()
    error = part.locator('.kb-error[data-for="spare_parts.0.on_hand"]')
    expect(error).to_be_visible()
    expect(error).to_have_text("Input should be greater than or equal to 0.")
    expect(part.locator('.kb-input[data-kind="number"]')).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#kb-form-error")).to_be_hidden()
    assert read(aria_server)[1:] == ["2", "1"]

    # someone (an agent) changed the KB meanwhile: the save is refused, not an overwrite
    aria_server.manage("shell", "-c", MEANWHILE)
    part.locator('.kb-input[data-kind="number"]').fill("5")
    page.locator("#kb-save").click()
    expect(page.locator("#kb-form-error")).to_contain_text("Someone changed this equipment's knowledge")
    assert read(aria_server)[1:] == ["2", "2"]
    assert page.evaluate("window.pwned") is None
    assert [e for e in page.console_errors if "status of 422" not in e and "status of 409" not in e] == [], (
        page.console_errors
    )
