"""The equipment page follows `equipment_kb_updated`: two operators on one cell's page. When the
second saves, the first one's page (not editing) re-reads itself and shows the new value and who
changed it; an agent's write (another process, actor `system`) arrives the same way. While the first
one edits, the second one's save is not swapped in under their inputs: a notice says who changed it
and when and that their save will be refused, and Reload shows it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_up

pytestmark = pytest.mark.browser

CELL = """
from sentinel.models import Cell, Line, Site
from workorders.demo_kb import kb_for
from workorders.models import EquipmentKB
site, _ = Site.objects.get_or_create(name="KB live site")
line, _ = Line.objects.get_or_create(site=site, name="KB live line")
cell, _ = Cell.objects.get_or_create(tag="KB-LIVE-1", defaults={"line": line, "name": "Live pump", "equipment_type": "pump"})
EquipmentKB.objects.update_or_create(cell=cell, defaults={"data": kb_for("pump"), "calibration_log": []})
print(cell.pk)
"""
AGENT = """
from sentinel.models import Cell
from workorders.services import equipment_kb_update
equipment_kb_update(cell=Cell.objects.get(tag="KB-LIVE-1"), patch={"equipment": {"manufacturer": "Agent AG"}}, actor=None, note="agent")
"""
FIELD = 'tr[data-field="equipment.manufacturer"]'


def save(page, value: str) -> None:
    page.locator("#kb-edit").click()
    page.locator(FIELD).locator(".kb-input").fill(value)
    page.locator("#kb-save").click()
    expect(page.locator("#kb-saved")).to_have_text("Saved.")


def test_an_open_equipment_page_follows_changes_made_elsewhere(tabs, aria_server):
    cell = aria_server.manage("shell", "-c", CELL).strip().splitlines()[-1]
    path = f"/equipment/{cell}/"
    first, second = tabs(), tabs()
    sign_up(first, aria_server, "h2b-kb-live-ann", path, "operator")
    sign_up(second, aria_server, "h2b-kb-live-bob", path, "operator")
    shown = first.locator(FIELD).locator(".kb-text")
    expect(shown).to_have_text("KSB")

    # not editing: the other person's save shows up without a reload, and who made it
    save(second, "Bob GmbH")
    expect(shown).to_have_text("Bob GmbH")
    expect(first.locator("#kb-updated")).to_contain_text("by h2b-kb-live-bob")
    expect(first.locator("#kb-changed")).to_be_hidden()

    # an agent's write from another process (the outbox tail carries it)
    aria_server.manage("shell", "-c", AGENT)
    expect(shown).to_have_text("Agent AG")
    expect(first.locator("#kb-updated")).to_contain_text("by system")

    # editing: the inputs stay as typed; the notice says who, when, and what will happen
    first.locator("#kb-edit").click()
    typing = first.locator(FIELD).locator(".kb-input")
    typing.fill("Ann's draft")
    save(second, "Bob again")
    notice = first.locator("#kb-changed")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text(
        re.compile(r"Changed by h2b-kb-live-bob at .+ — your save will be refused; reload to see it\.")
    )
    expect(typing).to_have_value("Ann's draft")
    expect(typing).to_be_visible()

    # saving anyway is refused (409), not an overwrite; Reload shows the other version
    first.locator("#kb-save").click()
    expect(first.locator("#kb-form-error")).to_contain_text("Someone changed this equipment's knowledge")
    first.locator("#kb-reload").click()
    expect(shown).to_have_text("Bob again")
    expect(notice).to_be_hidden()
    expect(typing).to_be_hidden()

    # the saver's own page is not told its own save was "changed by" someone
    expect(second.locator("#kb-changed")).to_be_hidden()
    assert [e for e in first.console_errors if "status of 409" not in e] == [], first.console_errors
    assert second.console_errors == [], second.console_errors
