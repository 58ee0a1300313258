"""The equipment page builds its merge patch from the KB's own key names: a section or key named
`__proto__` (a JSON key like any other, stored by the API) must be edited like any other key — the
edit reaches the server — and never written onto the page's Object.prototype."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_up

pytestmark = pytest.mark.browser

CELL = """
from sentinel.models import Cell, Line, Site
from workorders.models import EquipmentKB
site, _ = Site.objects.get_or_create(name="Proto site")
line, _ = Line.objects.get_or_create(site=site, name="Proto line")
cell, _ = Cell.objects.get_or_create(tag="PROTO-01", defaults={"line": line, "name": "Proto pump", "equipment_type": "pump"})
data = {"__proto__": {"polluted": "before"}, "notes": "kept"}
EquipmentKB.objects.update_or_create(cell=cell, defaults={"data": data, "calibration_log": []})
print(cell.pk)
"""
READ = """
import json
from workorders.models import EquipmentKB
print(json.dumps(EquipmentKB.objects.get(cell__tag="PROTO-01").data, sort_keys=True))
"""


def test_a_key_named_proto_is_saved_and_pollutes_nothing(page, aria_server):
    cell = aria_server.manage("shell", "-c", CELL).strip().splitlines()[-1]
    sign_up(page, aria_server, "h1-proto-operator", f"/equipment/{cell}/", "operator")
    field = page.locator('tr[data-field="__proto__.polluted"]')
    expect(field.locator(".kb-text")).to_have_text("before")

    page.locator("#kb-edit").click()
    field.locator(".kb-input").fill("after")
    page.locator("#kb-save").click()
    expect(page.locator("#kb-saved")).to_have_text("Saved.")
    expect(field.locator(".kb-text")).to_have_text("after")
    stored = json.loads(aria_server.manage("shell", "-c", READ).strip().splitlines()[-1])
    assert stored == {"__proto__": {"polluted": "after"}, "notes": "kept"}
    assert page.evaluate("({}).polluted") is None
