"""Controls that need the operator scope, in headless Chromium: an approver without it is shown no
Send in the Ask ARIA drawer, no New plan / Ask the coordinator form and no Write entry form (a note
says operator access is needed instead of a control that always answers 403); an operator sees and
uses each of them."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import open_tab, sign_in

pytestmark = pytest.mark.browser

CELL = (
    "from sentinel.models import Cell, Line, Site\n"
    "site, _ = Site.objects.get_or_create(name='Scope Plant')\n"
    "line, _ = Line.objects.get_or_create(site=site, name='Line S')\n"
    "Cell.objects.get_or_create(tag='SC-01', defaults={'line': line, 'name': 'Scope pump'})\n"
)


def test_an_approver_without_operator_is_shown_no_operator_controls(browser, aria_server):
    aria_server.manage("shell", "-c", CELL)
    aria_server.create_user("abby", "abby-approver-pass-1", "approver")
    tab = open_tab(browser, aria_server)

    sign_in(tab, "abby", "abby-approver-pass-1", next_path="/assistant/")
    drawer = tab.locator("#aria-drawer")
    expect(drawer).to_be_visible()
    expect(drawer.locator("#aria-operator-note")).to_contain_text("operator")
    expect(tab.locator("#aria-send")).to_have_count(0)
    expect(tab.locator("#aria-text")).to_have_count(0)
    expect(tab.locator("#aria-file")).to_have_count(0)
    # The drawer is the approver's review queue: no modes, History or Settings, no new-draft form.
    for chat_only in ("#aria-mode", "#aria-new", "#aria-history-toggle", "#aria-settings-toggle"):
        expect(tab.locator(chat_only)).to_have_count(0)
    expect(tab.locator("#aria-review")).to_be_visible()
    expect(tab.locator("#aria-draft-new")).to_have_count(0)
    expect(tab.locator("#aria-draft-new-scope")).to_be_visible()

    tab.goto("/plans/")
    expect(tab.locator("#plans-new")).to_have_count(0)
    expect(tab.locator("#coord-form")).to_have_count(0)
    expect(tab.locator("#plans-new-scope")).to_contain_text("operator")
    expect(tab.locator("#coord-scope")).to_contain_text("operator")

    tab.goto("/shift/")
    expect(tab.locator("#logbook-scope-note")).to_contain_text("operator")
    expect(tab.locator("#logbook-form")).to_be_hidden()
    expect(tab.get_by_role("button", name="Write entry")).to_be_hidden()
    expect(tab.locator("#handover-draft")).to_be_hidden()
    assert not [e for e in tab.console_errors if "403" in e or "Content Security Policy" in e], tab.console_errors


def test_an_operator_sees_and_uses_the_operator_controls(browser, aria_server):
    aria_server.manage("shell", "-c", CELL)
    aria_server.create_user("otto", "otto-operator-pass-1", "operator")
    tab = open_tab(browser, aria_server)

    sign_in(tab, "otto", "otto-operator-pass-1", next_path="/assistant/")
    expect(tab.locator("#aria-send")).to_be_enabled()
    expect(tab.locator("#aria-operator-note")).to_have_count(0)
    tab.select_option("#aria-mode", "build")
    tab.fill("#aria-text", "hello")
    tab.click("#aria-send")
    expect(tab.locator("#aria-log .aria-user")).to_have_text("hello")
    expect(tab.locator("#aria-log .aria-assistant .aria-text")).not_to_be_empty()

    tab.goto("/plans/")
    expect(tab.locator("#plans-new-scope")).to_have_count(0)
    labels = tab.locator("#plans-new select[name=autonomy] option").all_text_contents()
    assert labels == ["Ask before every step", "Ask before mutations", "Run on its own (gated still asks)"]
    expect(tab.locator("#plans-new select[name=autonomy]")).to_have_value("ask_mutations")
    tab.fill("#plans-new input[name=goal]", "What is on the backlog?")
    tab.click("#plans-new button[type=submit]")
    plan = tab.locator("#plans-list .plan").filter(has_text="What is on the backlog?")
    expect(plan).to_have_count(1)
    # Each plan's autonomy select shows the same labels, not the raw values.
    expect(plan.locator("select.plan-autonomy option:checked")).to_have_text("Ask before mutations")
    expect(tab.locator("#coord-form")).to_be_visible()

    tab.goto("/shift/")
    expect(tab.locator("#logbook-scope-note")).to_have_count(0)
    tab.select_option("#logbook-cell", label="SC-01 · Scope pump")
    tab.fill("#logbook-text", "SC-01 checked, all fine.")
    tab.get_by_role("button", name="Write entry").click()
    expect(tab.locator("#logbook-list .logbook-entry").filter(has_text="SC-01 checked")).to_have_count(1)
