"""The Shift page in headless Chromium against the real embedded server: the outgoing operator
writes a logbook entry with a text attachment, has the agent draft the handover (offline stand-in),
edits and signs it; the incoming operator — a different user, in another browser — sees it arrive
live and acknowledges it; the outgoing operator's page follows over the bus."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import open_tab, sign_in

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "shift-handover.png"


@pytest.mark.browser
def test_handover_drafted_edited_signed_and_acknowledged(browser, aria_server):
    aria_server.manage(
        "shell", "-c",
        "from sentinel.models import Cell, Line, Site\n"
        "site, _ = Site.objects.get_or_create(name='Handover Plant')\n"
        "line, _ = Line.objects.get_or_create(site=site, name='Line H')\n"
        "Cell.objects.get_or_create(tag='HP-07', defaults={'line': line, 'name': 'Booster pump'})\n",
    )  # fmt: skip
    aria_server.create_user("hannah", "handover-pass-out-1", "operator")
    aria_server.create_user("ingo", "handover-pass-in-1", "operator")

    outgoing = open_tab(browser, aria_server)
    sign_in(outgoing, "hannah", "handover-pass-out-1", next_path="/shift/")
    expect(outgoing.locator("#shift-ws-status")).to_have_attribute("data-status", "open")
    incoming = open_tab(browser, aria_server)
    sign_in(incoming, "ingo", "handover-pass-in-1", next_path="/shift/")
    expect(incoming.locator("#shift-ws-status")).to_have_attribute("data-status", "open")

    # The outgoing operator writes the logbook (with a text attachment); it is shown as text.
    outgoing.select_option("#logbook-cell", label="HP-07 · Booster pump")
    outgoing.select_option("#logbook-category", "safety")
    outgoing.fill("#logbook-text", "HP-07 <b>seal</b> dripping, tray placed.")
    outgoing.click("#logbook-attach summary")
    outgoing.fill("#logbook-attachment-name", "drips.csv")
    outgoing.select_option("#logbook-attachment-type", "text/csv")
    outgoing.fill("#logbook-attachment-text", "time,drops\n10:00,4\n")
    outgoing.click("#logbook-submit")
    entry = outgoing.locator("#logbook-list .logbook-entry").filter(has_text="HP-07 <b>seal</b> dripping")
    expect(entry).to_have_count(1)
    entry.get_by_role("button", name="drips.csv (19 B)").click()
    expect(entry.locator(".logbook-attachment-text")).to_have_text("time,drops\n10:00,4\n")
    # ... and the incoming operator's page shows it live.
    expect(incoming.locator("#logbook-list .logbook-entry").filter(has_text="seal</b> dripping")).to_have_count(1)

    # The agent drafts the handover from the shift's records: labelled offline (no model here).
    outgoing.click("#handover-draft")
    detail = outgoing.locator("#handover-detail")
    expect(detail.locator("#handover-status")).to_have_text("draft")
    expect(detail.locator("#handover-offline")).to_be_visible()
    body = outgoing.locator("#handover-body")
    expect(body).to_have_value(re.compile(r"Safety\n- HP-07 \(hannah, safety\)"))
    assert "HP-07 (hannah, safety): HP-07 <b>seal</b> dripping, tray placed." in body.input_value()
    assert "[Offline draft" in body.input_value()
    # A draft is its author's: the incoming operator does not see it yet.
    expect(incoming.locator("#handover-empty")).to_be_visible()

    # Edit, save, sign.
    watch = "Watch next shift\n"
    body.fill(body.input_value().replace(watch, watch + "- HP-07 seal: empty the tray hourly\n", 1))
    outgoing.click("#handover-save")
    expect(detail.locator("#handover-meta")).to_contain_text("revision 1")
    outgoing.click("#handover-sign")
    expect(detail.locator("#handover-status")).to_have_text("signed")
    expect(body).to_have_attribute("readonly", "")
    expect(outgoing.locator("#handover-sign")).to_be_hidden()
    expect(outgoing.locator("#handover-ack")).to_be_hidden()  # never one's own

    # The incoming operator sees the signed report arrive live and acknowledges it.
    item = incoming.locator("#handover-list .handover-item").filter(has_text="hannah")
    expect(item).to_contain_text("waiting for your acknowledgement")
    item.locator("button.handover-open").click()
    expect(incoming.locator("#handover-status")).to_have_text("signed")
    assert "- HP-07 seal: empty the tray hourly" in incoming.locator("#handover-body").input_value()
    expect(incoming.locator("#handover-save")).to_be_hidden()
    incoming.fill("#handover-ack-comment", "Taken over; watching HP-07.")
    incoming.click("#handover-ack")
    expect(incoming.locator("#handover-status")).to_have_text("acknowledged")
    expect(incoming.locator("#handover-meta")).to_contain_text("acknowledged by ingo")

    # The outgoing operator's page follows over the bus, and the report is searchable.
    expect(detail.locator("#handover-status")).to_have_text("acknowledged")
    expect(detail.locator("#handover-meta")).to_contain_text("Taken over; watching HP-07.")
    outgoing.screenshot(path=str(SCREENSHOT), full_page=True)
    outgoing.fill("#handover-search", "tray hourly")
    expect(outgoing.locator("#handover-list .handover-item")).to_have_count(1)
    outgoing.fill("#handover-search", "tray nonexistentword")
    expect(outgoing.locator("#handover-empty")).to_be_visible()

    for tab in (outgoing, incoming):
        assert not tab.console_errors, tab.console_errors
        tab.context.close()


@pytest.mark.browser
def test_the_author_attaches_a_text_to_their_entry_later_and_no_one_else_can(browser, aria_server):
    aria_server.manage(
        "shell", "-c",
        "from sentinel.models import Cell, Line, Site\n"
        "site, _ = Site.objects.get_or_create(name='Handover Plant')\n"
        "line, _ = Line.objects.get_or_create(site=site, name='Line H')\n"
        "Cell.objects.get_or_create(tag='HP-07', defaults={'line': line, 'name': 'Booster pump'})\n",
    )  # fmt: skip
    aria_server.create_user("h2-late", "attach-later-pass-1", "operator")
    aria_server.create_user("h2-other", "attach-later-pass-2", "operator")
    author = open_tab(browser, aria_server)
    sign_in(author, "h2-late", "attach-later-pass-1", next_path="/shift/")
    expect(author.locator("#shift-ws-status")).to_have_attribute("data-status", "open")
    author.select_option("#logbook-cell", label="HP-07 · Booster pump")
    author.fill("#logbook-text", "HP-07 vibration readings taken, file to follow.")
    author.click("#logbook-submit")
    entry = author.locator("#logbook-list .logbook-entry").filter(has_text="file to follow")
    expect(entry).to_have_count(1)

    # Typing into the attach form survives a live reload of the list (another operator writes).
    entry.locator(".logbook-attach-later summary").click()
    entry.locator("textarea[aria-label='Attachment text']").fill("<script>alert(1)</script>\nDE,4.1\n")
    entry.locator("input[aria-label='Attachment name']").fill("readings.csv")
    other = open_tab(browser, aria_server)
    sign_in(other, "h2-other", "attach-later-pass-2", next_path="/shift/")
    other.select_option("#logbook-cell", label="HP-07 · Booster pump")
    other.fill("#logbook-text", "HP-07 walkdown, nothing new.")
    other.click("#logbook-submit")
    expect(author.locator("#logbook-list .logbook-entry").filter(has_text="walkdown")).to_have_count(1)
    entry = author.locator("#logbook-list .logbook-entry").filter(has_text="file to follow")
    expect(entry.locator("textarea[aria-label='Attachment text']")).to_have_value("<script>alert(1)</script>\nDE,4.1\n")
    entry.locator(".logbook-attach-submit").click()
    expect(entry.get_by_role("button", name=re.compile(r"^readings\.csv \("))).to_have_count(1)
    entry.get_by_role("button", name=re.compile(r"^readings\.csv \(")).click()
    expect(entry.locator(".logbook-attachment-text")).to_have_text("<script>alert(1)</script>\nDE,4.1\n")

    # The other operator sees the entry and its attachment, but no way to add to it.
    theirs = other.locator("#logbook-list .logbook-entry").filter(has_text="file to follow")
    expect(theirs.get_by_role("button", name=re.compile(r"^readings\.csv \("))).to_have_count(1)
    expect(theirs.locator(".logbook-attach-later")).to_have_count(0)
    expect(
        other.locator("#logbook-list .logbook-entry").filter(has_text="walkdown").locator(".logbook-attach-later")
    ).to_have_count(1)
    assert not author.console_errors and not other.console_errors, (author.console_errors, other.console_errors)
