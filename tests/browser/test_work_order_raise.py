"""Raising a work order by hand on the Control Room: an operator opens *New work order*, is told in
words what is missing (nothing is sent), fills in the cell, title, description and priority, and the
order appears in the list with who raised it and a link to its page; a double click raises one
order. Markup typed in the title stays text. An approver, who watches the page, gets no form."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_up

pytestmark = pytest.mark.browser

CELL = """
from sentinel.models import Cell, Line, Site
site, _ = Site.objects.get_or_create(name="Raise site")
line, _ = Line.objects.get_or_create(site=site, name="Raise line")
cell, _ = Cell.objects.get_or_create(tag="RW-01", defaults={"line": line, "name": "Cooling fan <i>RW</i>", "equipment_type": "fan"})
print(cell.pk)
"""
COUNT = """
from workorders.models import WorkOrder
print(WorkOrder.objects.filter(cell__tag="RW-01", title={title!r}).count())
"""
TITLE = "Loose guard <b>on</b> the coupling <script>window.pwned=1</script>"


def test_an_operator_raises_an_order_and_sees_it_in_the_list(page, aria_server):
    cell = aria_server.manage("shell", "-c", CELL).strip().splitlines()[-1]
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" and "/api/v1/workorders" in r.url else None)
    sign_up(page, aria_server, "h1-raise-operator", "/", "operator")

    page.locator("#wo-new > summary").click()
    form = page.locator("#wo-new-form")
    expect(form.locator("#wo-new-cell option", has_text="RW-01")).to_have_text("RW-01 — Cooling fan <i>RW</i>")
    page.locator("#wo-new-submit").click()
    expect(page.locator("#wo-new-cell-error")).to_have_text("Choose the cell (equipment) where you found the problem.")
    expect(page.locator("#wo-new-title-error")).to_contain_text("Say in a few words what you found")
    assert posts == []

    # A title only of what Python strips (U+001E) is the server's 422, said beside the title.
    page.locator("#wo-new-cell").select_option(cell)
    page.locator("#wo-new-title").fill("\x1e")
    page.locator("#wo-new-submit").click()
    expect(page.locator("#wo-new-title-error")).to_contain_text("title")
    expect(page.locator("#wo-new-cell-error")).to_be_hidden()

    page.locator("#wo-new-title").fill(TITLE)
    page.locator("#wo-new-description").fill("Guard bolt missing; found on the 10:00 round.")
    page.locator("#wo-new-priority").select_option("high")
    # Two submits before the first answer (Chromium folds a double click on the button into one):
    # one order, whatever the second does.
    page.evaluate("() => { const f = document.getElementById('wo-new-form'); f.requestSubmit(); f.requestSubmit(); }")

    done = page.locator("#wo-new-done")
    expect(done).to_contain_text("raised on RW-01")
    link = done.locator("a")
    expect(link).to_have_text(TITLE)
    order = link.get_attribute("href").strip("/").split("/")[-1]
    card = page.locator(f"#work-order-{order}")
    expect(card.locator(".wo-title")).to_have_text(TITLE)
    expect(card.locator(".wo-raised-by")).to_have_text("Raised by hand by h1-raise-operator")
    expect(card.locator(".wo-priority")).to_have_text("high")
    expect(card).to_have_attribute("data-status", "open")
    expect(page.locator("#wo-new-title")).to_have_value("")  # the form is ready for the next one
    assert aria_server.manage("shell", "-c", COUNT.format(title=TITLE)).strip().splitlines()[-1] == "1"
    assert page.evaluate("window.pwned") is None

    link.click()
    expect(page.locator("#wo-heading")).to_contain_text(TITLE)
    expect(page.locator("#wo-status")).to_have_text("open")
    assert page.evaluate("window.pwned") is None
    # the one refused request (the blank title) is the browser's only complaint: no script error
    assert [e for e in page.console_errors if "status of 422" not in e] == [], page.console_errors


def test_an_approver_watching_the_control_room_gets_no_form(page, aria_server):
    sign_up(page, aria_server, "h1-raise-approver", "/", "approver")
    expect(page.locator("#work-order-list")).to_be_attached()
    expect(page.locator("#wo-new")).to_have_count(0)


STARTED_BY_HAND = """
from django.contrib.auth.models import User
from sentinel.models import Cell
from workorders.models import WorkOrder
from workorders.services.manual_intake import work_order_raise
user = User.objects.get(username="h1-raise-completer")
order, _ = work_order_raise(actor=user, cell=Cell.objects.get(tag="RW-01").pk, title="Noise at the fan")
WorkOrder.objects.filter(pk=order.pk).update(status="in_progress", assigned_technician="T. Tech")  # set up past assign/start
print(order.pk)
"""


def test_completing_an_order_raised_by_hand_asks_for_the_cause_found_not_a_verdict_on_an_rca(page, aria_server):
    """No root cause was proposed for an order raised by hand: the completion form offers nothing to
    confirm and asks for the cause found, which the server takes as the first word (a correction)."""
    aria_server.manage("shell", "-c", CELL)
    sign_up(page, aria_server, "h1-raise-completer", "/", "operator")
    order = aria_server.manage("shell", "-c", STARTED_BY_HAND).strip().splitlines()[-1]

    page.goto(f"{aria_server.url}/workorders/{order}/")
    page.locator(".btn-complete").click()
    verdict = page.locator(".wo-complete-form select[name='rca_verdict']")
    expect(verdict.locator("option")).to_have_count(1)
    expect(verdict).to_have_value("corrected")
    expect(verdict.locator("option")).to_have_text("None proposed: give the cause found")
    expect(page.locator(".wo-complete-form")).not_to_contain_text("The AI's root cause")
    expect(page.locator(".wo-complete-form textarea[name='actual_root_cause']")).to_have_attribute(
        "placeholder", "The root cause found (required)"
    )
