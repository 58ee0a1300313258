"""More lists and panels re-read from a fetch that comes back late (see test_fetch_races.py, whose
helpers these use): an older answer that lands after a newer one, or after the user moved on to
another session, window or list, is not drawn over it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import open_tab, sign_in
from tests.browser.test_fetch_races import PASSWORD, hold_first_get, land_last, wait_for

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(
        tmp_path_factory.mktemp("fetch-races-2"), {"ARIA_ENGINE": "fake", "ARIA_EVENTS_TAIL_SECONDS": "1"}
    )
    server.manage("seed_demo")
    yield server
    server.stop()


@pytest.fixture
def page(browser, server):
    page = open_tab(browser, server)
    yield page
    page.context.close()


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
