"""Lists and panels re-read from a fetch that comes back late, in headless Chromium against the real
server: an older answer that lands after a newer one (or after the user's own change) is not drawn
over it. Each test answers one GET with the state read when it was sent (`route.fetch()`), holds it
while a newer state is drawn, and lets it land last — the ordering a slow server gave CI."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import drawer_login, sign_up

pytestmark = pytest.mark.browser
PASSWORD = "races-pass-123456"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(
        tmp_path_factory.mktemp("fetch-races"), {"ARIA_ENGINE": "fake", "ARIA_EVENTS_TAIL_SECONDS": "1"}
    )
    server.manage("seed_demo")
    yield server
    server.stop()


def hold_first_get(page: Any, url: Any, method: str = "GET") -> list[tuple[Any, Any]]:
    """Answer the first GET (or `method`) of `url` with the server's answer now, but hand it to the
    page only when the test says so (route.fulfill); every other request goes through."""
    held: list[tuple[Any, Any]] = []

    def handle(route: Any) -> None:
        if route.request.method == method and not held:
            held.append((route, route.fetch()))
        else:
            route.continue_()

    page.route(url, handle)
    return held


def wait_for(page: Any, done: Callable[[], Any], what: str) -> None:
    for _ in range(300):  # route handlers run while the page waits
        if done():
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"timed out waiting for {what}")


def land_last(page: Any, held: list[tuple[Any, Any]]) -> None:
    route, response = held[0]
    route.fulfill(response=response)
    page.wait_for_timeout(800)  # the page has read and handled it


def test_drawer_attachments_show_each_once_when_an_older_refresh_lands_last(page, server):
    drawer_login(page, server, "race-chips", "operator")
    notes = ["first note", "second note"]
    page.on("dialog", lambda dialog: dialog.accept(notes.pop(0)))
    held = hold_first_get(page, re.compile(r"/sessions/\d+/attachments$"))
    page.click("#aria-snippet")  # refresh #1 reads [first]
    wait_for(page, lambda: held, "the first refresh")
    page.click("#aria-snippet")  # refresh #2 reads [first, second]
    chips = page.locator("#aria-chips .aria-chip")
    expect(chips).to_have_count(2)

    land_last(page, held)
    expect(chips).to_have_count(2)
    assert not page.console_errors, page.console_errors


def test_drawer_drafts_keep_the_newer_status_when_an_older_refresh_lands_last(page, server):
    drawer_login(page, server, "race-drafts", "operator")
    page.select_option("#aria-mode", "build")
    page.locator(".aria-draft-create summary").click()
    page.select_option("#aria-draft-type", "prompt")
    page.fill("#aria-draft-name", "race_prompt")
    page.get_by_role("button", name="Create draft").click()
    row = page.locator("#aria-draft-list .aria-draft").first
    expect(row.locator(".aria-badge")).to_have_text("draft")
    draft_id = int(row.get_attribute("data-draft-id"))
    page.wait_for_timeout(2500)  # the creation's own draft_updated frame has been handled

    held = hold_first_get(page, re.compile(r"/drafts\?session_id=\d+$"))
    frame = {"draft_id": draft_id, "draft_type": "prompt", "name": "race_prompt", "version": 1}
    server.publish("draft_updated", {**frame, "status": "draft"})  # refresh #1 reads "draft"
    wait_for(page, lambda: held, "the first refresh")
    server.manage("shell", "-c", f"from assistant.models import Draft\n"
                  f"Draft.objects.filter(pk={draft_id}).update(status='validated')\n")  # fmt: skip
    server.publish("draft_updated", {**frame, "status": "validated"})  # refresh #2 reads it
    expect(row.locator(".aria-badge")).to_have_text("validated")

    land_last(page, held)
    expect(row.locator(".aria-badge")).to_have_text("validated")
    assert not page.console_errors, page.console_errors


def test_work_order_page_keeps_the_newer_state_when_an_older_reload_lands_last(page, server):
    out = server.manage(
        "shell", "-c",
        "from sentinel.models import Cell\n"
        "from workorders.models import WorkOrder\n"
        "wo = WorkOrder.objects.create(cell=Cell.objects.get(tag='P-02'), title='Race on P-02', status='open',"
        " priority='high')\n"
        "print('WO', wo.pk)\n",
    )  # fmt: skip
    order_id = int(re.search(r"WO (\d+)", out).group(1))
    sign_up(page, server, "race-wo", f"/workorders/{order_id}/", "operator", password=PASSWORD)
    status = page.locator("#wo-status")
    expect(status).to_have_attribute("data-status", "open")

    held = hold_first_get(page, f"**/api/v1/workorders/{order_id}/execution")
    frame = {"work_order_id": order_id, "from_status": "open", "change": "transition", "actor": "race"}
    server.publish("work_order_updated", {**frame, "status": "open"})  # reload #1 reads "open"
    wait_for(page, lambda: held, "the first reload")
    server.manage("shell", "-c", f"from workorders.models import WorkOrder\n"
                  f"WorkOrder.objects.filter(pk={order_id}).update(status='in_progress')\n")  # fmt: skip
    server.publish("work_order_updated", {**frame, "status": "in_progress"})  # reload #2 reads it
    expect(status).to_have_attribute("data-status", "in_progress")

    land_last(page, held)
    expect(status).to_have_attribute("data-status", "in_progress")
    assert not page.console_errors, page.console_errors


def test_plans_page_keeps_the_newer_plans_when_an_older_load_lands_last(page, server):
    sign_up(page, server, "race-plans", "/plans/", "operator", password=PASSWORD)
    expect(page.locator("#plans-ws-status")).to_have_attribute("data-status", "open")
    page.fill("#plans-new input[name=goal]", "What is on the backlog?")
    page.click("#plans-new button[type=submit]")
    plan = page.locator("article.plan").first
    expect(plan.locator(".plan-status")).to_have_text("draft")
    plan_id = int(plan.get_attribute("id").removeprefix("plan-"))
    page.wait_for_timeout(2500)  # the creation's own plan_updated frames have been handled

    held = hold_first_get(page, "**/api/v1/aria/plans")
    shell = (
        "from orchestrator.models import Plan\n"
        "from orchestrator.services.plans import plan_updated\n"
        "{change}plan_updated(Plan.objects.get(pk={pk}))\n"
    )
    server.manage("shell", "-c", shell.format(change="", pk=plan_id))  # a frame: load #1 reads "draft"
    wait_for(page, lambda: held, "the first load")
    cancel = f"Plan.objects.filter(pk={plan_id}).update(status='cancelled')\n"
    server.manage("shell", "-c", shell.format(change=cancel, pk=plan_id))  # load #2 reads "cancelled"
    expect(plan.locator(".plan-status")).to_have_text("cancelled")

    land_last(page, held)
    expect(plan.locator(".plan-status")).to_have_text("cancelled")
    assert not page.console_errors, page.console_errors


def test_shift_handover_reload_does_not_take_the_edits_typed_while_it_was_on_its_way(page, server):
    sign_up(page, server, "race-shift", "/shift/", "operator", password=PASSWORD)
    expect(page.locator("#shift-ws-status")).to_have_attribute("data-status", "open")
    page.click("#handover-draft")
    detail = page.locator("#handover-detail")
    expect(detail.locator("#handover-status")).to_have_text("draft")
    handover_id = int(detail.get_attribute("data-handover-id"))
    body = page.locator("#handover-body")
    report = body.input_value()
    page.wait_for_timeout(2500)  # the draft's own handover_updated frame has been handled

    held = hold_first_get(page, f"**/api/v1/workorders/shift/handovers/{handover_id}")
    server.publish(
        "handover_updated",
        {"handover_id": handover_id, "status": "draft", "date": "2026-01-01", "shift": "early",
         "outgoing": "race-shift", "incoming": None, "action": "edited"},
    )  # fmt: skip
    wait_for(page, lambda: held, "the live reload of the open handover")
    typed = report + "\n- P-02: check the seal at 14:00"
    body.fill(typed)  # the operator edits while that reload is on its way

    land_last(page, held)
    expect(body).to_have_value(typed)
    assert not page.console_errors, page.console_errors


def make_order(server: Any, title: str, status: str) -> int:
    out = server.manage(
        "shell", "-c",
        "from sentinel.models import Cell\n"
        "from workorders.models import WorkOrder\n"
        f"wo = WorkOrder.objects.create(cell=Cell.objects.get(tag='P-02'), title={title!r}, status={status!r},"
        " priority='high')\n"
        "print('WO', wo.pk)\n",
    )  # fmt: skip
    return int(re.search(r"WO (\d+)", out).group(1))


def set_order_status(server: Any, order_id: int, status: str) -> None:
    server.manage("shell", "-c", f"from workorders.models import WorkOrder\n"
                  f"WorkOrder.objects.filter(pk={order_id}).update(status={status!r})\n")  # fmt: skip


def control_room(page: Any, server: Any, username: str) -> None:
    sign_up(page, server, username, "/", "operator", password=PASSWORD)
    expect(page.locator("#ws-status")).to_have_attribute("data-status", "open")


def park_snapshots(page: Any, let_through: int = 0) -> list[Any]:
    """The Control Room re-reads its snapshot every 5 s, which would mend an older answer drawn over a
    newer one: after `let_through` snapshots, the rest are held unanswered (the test reads the page
    right after the older answer landed, not waiting on it)."""
    parked: list[Any] = []

    def handle(route: Any) -> None:
        nonlocal let_through
        if let_through > 0:
            let_through -= 1
            route.continue_()
        else:
            parked.append(route)

    page.route("**/control-room/state", handle)
    return parked


def test_control_room_snapshot_keeps_the_newer_state_when_an_older_snapshot_lands_last(page, server):
    order_id = make_order(server, "Race on the snapshot", "open")
    control_room(page, server, "race-cr-state")
    card = page.locator(f"#work-order-{order_id}")
    expect(card).to_have_attribute("data-status", "open")

    held = hold_first_get(page, "**/control-room/state")  # the next periodic snapshot reads "open"
    wait_for(page, lambda: held, "the first snapshot")
    park_snapshots(page, let_through=1)
    set_order_status(server, order_id, "in_progress")  # a later snapshot reads it
    expect(card).to_have_attribute("data-status", "in_progress")

    land_last(page, held)
    assert card.get_attribute("data-status") == "in_progress"
    assert not page.console_errors, page.console_errors


def test_control_room_order_stays_open_when_its_rca_ready_reload_lands_last(page, server):
    order_id = make_order(server, "Race on the RCA", "analyzed")
    control_room(page, server, "race-cr-order")
    card = page.locator(f"#work-order-{order_id}")
    expect(card).to_have_attribute("data-status", "analyzed")
    park_snapshots(page)
    held = hold_first_get(page, f"**/api/v1/workorders/{order_id}")
    server.publish("rca_ready", {"work_order_id": order_id, "rca_summary": "bearing_wear: race", "confidence": 0.8})
    wait_for(page, lambda: held, "the rca_ready reload")  # it reads "analyzed"
    set_order_status(server, order_id, "open")
    with page.expect_response(re.compile(rf"/api/v1/workorders/{order_id}$")):  # the frame patches "open" first
        server.publish("work_order_ready", {"work_order_id": order_id})  # its reload reads "open"
    expect(card).to_have_attribute("data-status", "open")

    land_last(page, held)
    assert card.get_attribute("data-status") == "open"
    assert not page.console_errors, page.console_errors


def test_control_room_trend_shows_the_signal_picked_last_when_an_older_trend_lands_last(page, server):
    control_room(page, server, "race-cr-trend")
    figure = page.locator(".trend").filter(has=page.locator(".trend-select option:nth-child(2)")).first
    select = figure.locator(".trend-select")
    expect(figure.locator("svg.trend-svg")).to_have_count(1)
    first = select.input_value()
    other = next(v for v in select.locator("option").evaluate_all("os => os.map((o) => o.value)") if v != first)

    held = hold_first_get(page, re.compile(rf"/api/v1/signals/{other}/trends\?"))
    select.select_option(other)  # its trend GET is held
    wait_for(page, lambda: held, "the trend of the signal picked first")
    with page.expect_response(re.compile(rf"/api/v1/signals/{first}/trends\?")):
        select.select_option(first)  # the operator changes their mind: this trend is drawn
    title = figure.locator("svg.trend-svg title")
    name = select.locator(f'option[value="{first}"]').inner_text()
    expect(title).to_have_text(re.compile(re.escape(name) + "$"))

    land_last(page, held)
    assert title.text_content().endswith(name), title.text_content()
    assert select.input_value() == first
    assert not page.console_errors, page.console_errors


def test_needs_me_badge_keeps_the_newer_count_when_the_first_load_lands_last(page, server):
    held = hold_first_get(page, "**/api/v1/aria/needs-me")
    sign_up(page, server, "race-badge", "/shift/", "operator", password=PASSWORD)  # the badge's first load reads 0
    wait_for(page, lambda: held, "the badge's first load")
    server.manage("shell", "-c",
        "from django.contrib.auth.models import User\n"
        "from orchestrator.models import Interaction, Plan\n"
        "plan = Plan.objects.create(owner=User.objects.get(username='race-badge'), goal='Race on the badge')\n"
        "Interaction.objects.create(plan=plan, kind='confirm', question='Go on?')\n")  # fmt: skip
    badge = page.locator("#needs-me-badge")
    frame = (
        "from orchestrator.models import Plan\n"
        "from orchestrator.services.plans import plan_updated\n"
        "plan_updated(Plan.objects.get(goal='Race on the badge'))\n"
    )
    for _ in range(20):  # a frame once the badge's socket is open: its refresh reads 1
        server.manage("shell", "-c", frame)
        page.wait_for_timeout(1000)
        if badge.text_content() == "1":
            break
    expect(badge).to_have_text("1")

    land_last(page, held)
    expect(badge).to_have_text("1")
    expect(badge).to_be_visible()
    assert not page.console_errors, page.console_errors


def drawer_build_session(page: Any, server: Any, username: str) -> None:
    """An operator's drawer in build mode with a session (made by setting tool approval to 'allow')."""
    drawer_login(page, server, username, "operator")
    page.select_option("#aria-mode", "build")
    page.select_option("#aria-tool-approval", "allow")
    expect(page.locator("#aria-tool-approval-status")).to_contain_text("without asking")
    rebuild(page)  # the panel reads the new session's skills
    page.locator(".aria-skills summary").click()
    expect(page.locator('.aria-skill[data-skill="maintenance-domain"] select')).to_have_value("auto")
    page.wait_for_timeout(500)  # the build mode's own refreshes have landed


def rebuild(page: Any) -> None:
    """Leave build mode and come back: the session panel refreshes."""
    page.select_option("#aria-mode", "chat")
    page.select_option("#aria-mode", "build")


def test_drawer_tool_approval_keeps_the_users_change_when_an_older_refresh_lands_last(page, server):
    drawer_build_session(page, server, "race-approval")
    held = hold_first_get(page, re.compile(r"/sessions/\d+$"))
    rebuild(page)  # the refresh reads "allow"
    wait_for(page, lambda: held, "the session panel's refresh")
    page.select_option("#aria-tool-approval", "ask")  # the user changes it meanwhile
    expect(page.locator("#aria-tool-approval-status")).to_contain_text("waits for your Confirm")

    land_last(page, held)
    expect(page.locator("#aria-tool-approval")).to_have_value("ask")
    assert not page.console_errors, page.console_errors


def test_drawer_skill_keeps_the_users_pin_when_an_older_refresh_lands_last(page, server):
    drawer_build_session(page, server, "race-skill")
    held = hold_first_get(page, re.compile(r"/sessions/\d+/skills$"))
    rebuild(page)  # the refresh reads "auto"
    wait_for(page, lambda: held, "the skills refresh")
    skill = page.locator('.aria-skill[data-skill="maintenance-domain"] select')
    with page.expect_response(re.compile(r"/sessions/\d+/skills/maintenance-domain$")):
        skill.select_option("pinned")  # the user pins it meanwhile: the answer redraws the list
    expect(skill).to_have_value("pinned")

    land_last(page, held)
    expect(skill).to_have_value("pinned")
    assert not page.console_errors, page.console_errors
