"""The Ask ARIA drawer on every page, not only /assistant/: its live parts (the draft queue on
`draft_updated`, a confirm card on `tool_call_decided`) follow the event bus wherever it is opened,
because the shared scripts (window.Aria, window.AriaEvents) run before the drawer's."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import sign_in, sign_up

pytestmark = pytest.mark.browser

API = "/api/v1/assistant"
ORDER = """
from sentinel.models import Cell
from workorders.models import WorkOrder
cell = Cell.objects.get(tag="P-02")
print(WorkOrder.objects.create(cell=cell, title="drawer everywhere", status="open", priority="medium").pk)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("drawer-everywhere"), {"ARIA_ENGINE": "fake"})
    server.manage("seed_demo")
    yield server
    server.stop()


def open_drawer(page: Any) -> None:
    if page.get_attribute("#aria-ask-toggle", "aria-expanded") != "true":  # /assistant/ opens it itself
        page.click("#aria-ask-toggle")
    expect(page.locator("#aria-drawer")).to_be_visible()


def call(page: Any, method: str, path: str, body: Any = None) -> Any:
    """The API as the signed-in user of `page` (session cookie and CSRF token, through Aria.api)."""
    return page.evaluate("([m, p, b]) => window.Aria.api(m, p, b)", [method, path, body])


def no_console_errors(page: Any) -> None:
    assert not page.console_errors, page.console_errors


@pytest.fixture(scope="module")
def order(server) -> str:
    return server.manage("shell", "-c", ORDER).strip().splitlines()[-1]


PAGES = [
    "/",
    "/shift/",
    "/plans/",
    "/alarms/performance/",
    "/events/",
    "/assistant/",
    "/assistant/workbench/",
    "/workorders/{order}/",
]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_loads_the_drawer_with_the_shared_scripts_first_and_no_console_error(tabs, server, order, path):
    path = path.format(order=order)
    slug = path.strip("/").replace("/", "-") or "root"
    page = tabs()
    sign_up(page, server, f"dz-every-{slug}", path, "operator", "approver")
    expect(page.locator("#aria-ask-toggle")).to_be_visible()
    open_drawer(page)
    expect(page.locator("#aria-access .aria-badge").first).to_be_visible()  # the drawer's script ran
    # the bus client and the page's own globals are defined when the drawer's scripts run
    assert page.evaluate("Boolean(window.AriaEvents && window.Aria && window.AriaDrafts && window.AriaSession)")
    no_console_errors(page)


@pytest.mark.parametrize("path", ["/", "/shift/", "/plans/"])
def test_an_approvers_drawer_queue_follows_the_bus_on_every_page(tabs, server, path):
    slug = path.strip("/") or "root"
    approver = tabs()
    sign_up(approver, server, f"dz-appr-{slug}", path, "approver")
    open_drawer(approver)
    queue = approver.locator("#aria-review-list")
    expect(queue).to_contain_text("Nothing waits for your approval.")

    author = tabs()
    sign_up(author, server, f"dz-auth-{slug}", "/assistant/", "operator")
    name = f"everywhere-{slug}"
    spec = {"agent": "investigator", "text": "Always list 3 hypotheses. Finish by calling submit_rca.", "variables": []}
    draft = call(author, "POST", f"{API}/drafts", {"type": "prompt", "name": name, "spec": spec})
    assert call(author, "POST", f"{API}/drafts/{draft['id']}/validate")["status"] == "validated"
    assert call(author, "POST", f"{API}/drafts/{draft['id']}/test")["status"] == "tested"

    row = queue.locator(".aria-draft").filter(has_text=f"prompt {name} v1")
    expect(row.get_by_role("button", name="Approve")).to_be_visible()  # live, no reload

    call(author, "DELETE", f"{API}/drafts/{draft['id']}")  # the author discards it
    expect(row).to_have_count(0)  # gone live: no stale row whose Approve would answer 404
    expect(queue).to_contain_text("Nothing waits for your approval.")
    no_console_errors(approver)


def test_a_confirm_card_follows_a_rejection_in_another_tab_on_the_plans_page(tabs, server, order):
    page = tabs()
    sign_up(page, server, "dz-olga", "/plans/", "operator")
    open_drawer(page)
    page.select_option("#aria-mode", "build")
    page.fill("#aria-text", f"set the priority of work order {order} to high")
    page.click("#aria-send")
    card = page.locator(".aria-confirm").last
    expect(card.get_by_role("button", name="Reject")).to_be_visible()
    call_id = card.get_attribute("data-call-id")

    other = tabs()  # the same engineer in another tab declines it
    sign_in(other, "dz-olga", "pw-dz-olga-123456", next_path="/shift/")
    assert call(other, "POST", f"{API}/tool-calls/{call_id}/reject", {})["status"] == "rejected"

    expect(card.locator(".aria-confirm-status")).to_have_text("Declined")  # live, no reload
    expect(card.get_by_role("button", name="Confirm")).to_have_count(0)
    out = server.manage(
        "shell", "-c",
        f"from workorders.models import WorkOrder\nprint('PRIORITY', WorkOrder.objects.get(pk={order}).priority)",
    )  # fmt: skip
    assert "PRIORITY medium" in out
    no_console_errors(page)


def test_an_approvers_drawer_says_once_what_needs_the_operator_scope_in_one_readable_note(tabs, server):
    page = tabs()
    sign_up(page, server, "dz-vera", "/", "approver")
    open_drawer(page)
    note = page.locator("#aria-operator-note")
    expect(note).to_contain_text("needs the operator scope")
    expect(page.locator("#aria-draft-new-scope")).to_be_visible()  # why there is no new-draft form
    said = " ".join(page.locator("#aria-drawer").text_content().split())
    assert said.count("operator scope") == 1, said
    # one paragraph, not three flex columns (a flex item is blockified: the bold scope was a column)
    assert note.evaluate("n => getComputedStyle(n).display") == "block"
    assert note.locator("b").evaluate("b => getComputedStyle(b).display") == "inline"
    no_console_errors(page)
