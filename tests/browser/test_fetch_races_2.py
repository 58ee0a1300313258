"""More lists and panels re-read from a fetch that comes back late (see test_fetch_races.py, whose
helpers these use): an older answer that lands after a newer one, or after the user moved on to
another session, window or list, is not drawn over it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import drawer_login, sign_in
from tests.browser.test_fetch_races import (
    PASSWORD,
    control_room,
    hold_first_get,
    land_last,
    make_order,
    park_snapshots,
    set_order_status,
    wait_for,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(
        tmp_path_factory.mktemp("fetch-races-2"), {"ARIA_ENGINE": "fake", "ARIA_EVENTS_TAIL_SECONDS": "1"}
    )
    server.manage("seed_demo")
    yield server
    server.stop()


def assistant_api(page: Any, method: str, path: str, body: dict | None = None) -> Any:
    return page.evaluate("([m, p, b]) => Aria.api(m, '/api/v1/assistant' + p, b)", [method, path, body])


def script_errors(page: Any) -> list[str]:
    """Console errors other than the browser's own log of a non-2xx fetch."""
    return [e for e in page.console_errors if not e.startswith("Failed to load resource")]


def test_workbench_shows_nothing_of_the_previous_session_when_its_loads_land_last(page, server):
    server.create_user("race-bench", PASSWORD, "operator")
    sign_in(page, "race-bench", PASSWORD, next_path="/assistant/")
    first = assistant_api(page, "POST", "/sessions", {"title": "race first"})["id"]
    second = assistant_api(page, "POST", "/sessions", {"title": "race second"})["id"]
    plan = {"intent": "create_skill", "text": "race", "slots": {"name": "race_one", "text": "Keep it short."}}
    done = assistant_api(page, "POST", f"/sessions/{first}/plans", plan)
    assistant_api(page, "POST", f"/sessions/{first}/plans/execute", {"plan_id": done["id"], "confirm": True})
    plan["slots"]["name"] = "race_two"
    assistant_api(page, "POST", f"/sessions/{first}/plans", plan)  # waits for its confirmation

    waiting = hold_first_get(page, f"**/api/v1/assistant/sessions/{first}/plans/latest")
    drafts = hold_first_get(page, f"**/api/v1/assistant/sessions/{first}/drafts")
    page.goto(f"/assistant/workbench/?session={first}")  # the first session's operation and drafts load
    wait_for(page, lambda: waiting and drafts, "the first session's loads")
    with page.expect_response(re.compile(rf"/sessions/{second}/drafts$")):
        page.select_option("#wb-session", str(second))  # the user switches meanwhile
    expect(page.locator("#wb-drafts-empty")).to_be_visible()

    land_last(page, waiting)
    land_last(page, drafts)
    shown = {
        "operation": page.locator("#wb-planned").is_visible(),
        "drafts": page.locator("#wb-drafts .wb-draft").count(),
        "no drafts": page.locator("#wb-drafts-empty").is_visible(),
    }
    assert shown == {"operation": False, "drafts": 0, "no drafts": True}
    assert page.locator("#wb-session").input_value() == str(second)
    assert not script_errors(page), page.console_errors


def test_alarm_performance_shows_the_line_picked_last_when_an_older_report_lands_last(page, server):
    server.create_user("race-perf", PASSWORD, "operator")
    sign_in(page, "race-perf", PASSWORD, next_path="/alarms/performance/")
    status = page.locator("#perf-status")
    expect(status).to_have_attribute("data-status", "open")
    site = status.text_content()
    line = page.locator("#perf-window select[name=line_id] option:nth-child(2)")
    line_id, line_name = line.get_attribute("value"), line.text_content()

    held = hold_first_get(page, re.compile(r"/api/v1/alarm-performance\?"))
    page.select_option("#perf-window select[name=hours]", "8")  # the whole site's report is held
    wait_for(page, lambda: held, "the whole site's report")
    with page.expect_response(re.compile(rf"line_id={line_id}")):
        page.select_option("#perf-window select[name=line_id]", line_id)  # the user picks a line meanwhile
    expect(status).to_have_attribute("data-status", "open")
    expect(status).to_have_text(line_name)
    assert line_name != site

    land_last(page, held)
    expect(status).to_have_text(line_name)
    assert not script_errors(page), page.console_errors


SESSION_LIST = re.compile(r"/api/v1/assistant/sessions(\?archived=false)?$")


def chat(page: Any, text: str) -> None:
    """Send a chat turn and wait for the session list read when it is done (not held)."""
    with page.expect_response(SESSION_LIST):
        page.fill("#aria-text", text)
        page.click("#aria-send")


def my_sessions(page: Any) -> list[dict]:
    return assistant_api(page, "GET", "/sessions")


def test_drawer_history_keeps_the_newer_list_when_show_archived_is_toggled_twice(page, server):
    drawer_login(page, server, "race-archived", "operator")
    kept = assistant_api(page, "POST", "/sessions", {"title": "race kept"})
    gone = assistant_api(page, "POST", "/sessions", {"title": "race archived"})
    assistant_api(page, "PATCH", f"/sessions/{gone['id']}", {"archived": True})
    page.click("#aria-history-toggle")
    items = page.locator("#aria-session-list .aria-link")
    expect(items).to_have_text([kept["title"]])

    held = hold_first_get(page, re.compile(r"/api/v1/assistant/sessions$"))
    page.check("#aria-show-archived")  # this list, with the archived session, is held
    wait_for(page, lambda: held, "the list with archived sessions")
    with page.expect_response(SESSION_LIST):
        page.uncheck("#aria-show-archived")  # and this one is drawn
    expect(items).to_have_text([kept["title"]])

    land_last(page, held)
    expect(items).to_have_text([kept["title"]])
    assert not page.console_errors, page.console_errors


def test_drawer_new_chat_does_not_adopt_the_previous_chats_session_from_a_list_landing_late(page, server):
    drawer_login(page, server, "race-new-chat", "operator")
    page.wait_for_timeout(500)  # the drawer's own first reads are done
    held = hold_first_get(page, SESSION_LIST)
    page.fill("#aria-text", "Why did P-02 trip?")
    page.click("#aria-send")  # when done, the chat adopts its session from the list: held
    wait_for(page, lambda: held, "the list read when the chat is done")
    page.click("#aria-new")  # the user starts a new chat meanwhile

    land_last(page, held)
    chat(page, "What is on the work order backlog?")  # a new chat: a new session
    sessions = my_sessions(page)
    assert len(sessions) == 2, sessions
    assert not page.console_errors, page.console_errors


# The old script passes this one; a fix by the newest-wins counter alone (which drops the older
# list, and its adoption with it) fails it: the turn's details and the mode switch need the session.
def test_drawer_chat_keeps_its_session_when_its_list_lands_after_a_newer_one(page, server):
    drawer_login(page, server, "race-adopt", "operator")
    page.click("#aria-history-toggle")
    page.wait_for_timeout(500)  # the drawer's own first reads are done
    held = hold_first_get(page, SESSION_LIST)
    page.fill("#aria-text", "Why did P-02 trip?")
    page.click("#aria-send")  # when done, the chat adopts its session from the list: held
    wait_for(page, lambda: held, "the list read when the chat is done")
    with page.expect_response(re.compile(r"/api/v1/assistant/sessions$")):
        page.check("#aria-show-archived")  # a newer list is drawn meanwhile

    land_last(page, held)  # older, but the chat's session is still adopted from it: its turn's
    answer = page.locator(".aria-assistant").last  # details are read from the session's messages
    expect(answer.locator(".aria-turn-details")).to_have_count(1)
    expect(answer.locator(".aria-offline-mark")).to_have_count(1)
    page.select_option("#aria-mode", "build")  # and the chat's session follows the mode
    expect(page.locator("#aria-skill-list .aria-skill").first).to_be_attached()
    assert [s["mode"] for s in my_sessions(page)] == ["build"]
    assert not page.console_errors, page.console_errors


def test_control_room_snapshot_sent_before_a_work_order_frame_does_not_undo_it(page, server):
    # The snapshot on its way when work_order_ready patched the card read "analyzed": landing last, it
    # drew the card back to "analyzed" until the next 5 s snapshot. Now it is dropped and read again.
    order_id = make_order(server, "Race on the frame", "analyzed")
    control_room(page, server, "race-cr-frame")
    card = page.locator(f"#work-order-{order_id}")
    expect(card).to_have_attribute("data-status", "analyzed")

    held = hold_first_get(page, "**/control-room/state")  # the next periodic snapshot reads "analyzed"
    wait_for(page, lambda: held, "the periodic snapshot")
    park_snapshots(page)  # later snapshots stay unanswered: only the frame and its reload draw the card
    set_order_status(server, order_id, "open")
    with page.expect_response(re.compile(rf"/api/v1/workorders/{order_id}$")):
        server.publish("work_order_ready", {"work_order_id": order_id})
    expect(card).to_have_attribute("data-status", "open")

    land_last(page, held)
    assert card.get_attribute("data-status") == "open"
    assert not page.console_errors, page.console_errors


def test_workbench_plan_answered_after_a_session_switch_is_offered_in_its_own_session(page, server):
    # Plan was POSTed for the first session; the user switched to the second before it answered. The
    # answer was drawn in the second session's view, as if it waited there, and Execute would have
    # confirmed it from there. Now it is offered only where it waits.
    server.create_user("race-bench-plan", PASSWORD, "operator")
    sign_in(page, "race-bench-plan", PASSWORD, next_path="/assistant/")
    first = assistant_api(page, "POST", "/sessions", {"title": "plan first"})["id"]
    second = assistant_api(page, "POST", "/sessions", {"title": "plan second"})["id"]
    page.goto(f"/assistant/workbench/?session={first}")
    expect(page.locator("#wb-session")).to_have_value(str(first))
    page.fill("#wb-text", 'Create a skill called race_plan: "Keep it short."')
    page.get_by_role("button", name="Resolve").click()
    expect(page.locator("#wb-intent")).to_have_value("create_skill")

    held = hold_first_get(page, f"**/api/v1/assistant/sessions/{first}/plans", method="POST")
    page.get_by_role("button", name="Plan").click()
    wait_for(page, lambda: held, "the plan's POST")
    with page.expect_response(re.compile(rf"/sessions/{second}/drafts$")):
        page.select_option("#wb-session", str(second))

    land_last(page, held)
    assert not page.locator("#wb-planned").is_visible()
    with page.expect_response(re.compile(rf"/sessions/{first}/plans/latest$")):
        page.select_option("#wb-session", str(first))  # it waits in its own session
    expect(page.locator("#wb-planned")).to_be_visible()
    expect(page.locator("#wb-plan-note")).to_contain_text("still waits for your confirmation")
    assert not script_errors(page), page.console_errors
