"""The intent workbench in headless Chromium, and the offline demo engine's mark on RCA cards.

An engineer reaches the workbench from the navigation, picks their session, types an intent, sees
it resolved (intent + slots), plans it, confirms, and sees the operation's stored result and the
session's new draft. The Control Room card and the work-order page mark an RCA the offline engine
wrote, and not one recorded with a real provider."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import open_tab, sign_in

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("workbench"), {"ARIA_ENGINE": "fake"})
    yield server
    server.stop()


@pytest.fixture
def tab(browser, server):
    page = open_tab(browser, server)
    page.server_errors = []  # 5xx answers to this page's calls (a 404 from plans/latest is an answer)
    page.on("response", lambda r: page.server_errors.append(r.url) if r.status >= 500 else None)
    yield page
    page.context.close()


def script_errors(page) -> list[str]:
    """Console errors other than the browser's own log of a non-2xx fetch."""
    return [e for e in page.console_errors if not e.startswith("Failed to load resource")]


def test_an_engineer_walks_intent_resolve_plan_confirm_and_result(tab, server):
    server.create_user("erin", "pw-erin-123456", "operator")
    sign_in(tab, "erin", "pw-erin-123456", next_path="/assistant/")
    session = tab.evaluate("() => Aria.api('POST', '/api/v1/assistant/sessions', {title: 'workbench walk'})")

    # reachable from the navigation
    tab.locator("nav.nav").get_by_role("link", name="Workbench").click()
    expect(tab).to_have_url(re.compile(r"/assistant/workbench/$"))
    tab.select_option("#wb-session", str(session["id"]))
    expect(tab.locator("#wb-drafts-panel")).to_be_visible()
    expect(tab.locator("#wb-drafts-empty")).to_be_visible()

    # a slots box that is not a JSON object is refused in the page, before any call
    tab.fill("#wb-text", 'Create a skill called tidy_tools: "When drafting tools, keep them pure."')
    tab.get_by_role("button", name="Resolve").click()
    expect(tab.locator("#wb-resolved")).to_have_attribute("data-intent", "create_skill")
    expect(tab.locator("#wb-intent")).to_have_value("create_skill")
    assert json.loads(tab.input_value("#wb-slots")) == {
        "name": "tidy_tools",
        "text": "When drafting tools, keep them pure.",
    }
    expect(tab.locator("#wb-confidence")).to_have_text("90%")
    tab.fill("#wb-slots", "[1, 2]")
    tab.get_by_role("button", name="Plan").click()
    expect(tab.locator("#wb-error")).to_contain_text("slots: must be a JSON object")
    expect(tab.locator("#wb-planned")).to_be_hidden()

    tab.fill("#wb-slots", json.dumps({"name": "tidy_tools", "text": "When drafting tools, keep them pure."}))
    tab.get_by_role("button", name="Plan").click()
    planned = tab.locator("#wb-planned")
    expect(planned).to_be_visible()
    expect(tab.locator("#wb-error")).to_be_hidden()
    expect(tab.locator("#wb-plan-status")).to_have_text("planned")
    expect(tab.locator("#wb-preview")).to_contain_text("skill draft")
    expect(tab.locator("#wb-preview")).to_contain_text("keep them pure")
    expect(tab.locator("#wb-execute")).to_be_disabled()  # confirm first
    expect(tab.locator("#wb-drafts-empty")).to_be_visible()  # nothing created yet

    # a reload offers the planned operation again (plans/latest of the session)
    tab.goto(f"/assistant/workbench/?session={session['id']}")
    expect(tab.locator("#wb-plan-note")).to_contain_text("still waits for your confirmation")

    tab.check("#wb-confirm")
    tab.get_by_role("button", name="Execute").click()
    result = tab.locator("#wb-operation")
    expect(result).to_have_attribute("data-status", "executed")
    expect(tab.locator("#wb-result")).to_contain_text(re.compile(r"draft #\d+ created"))
    expect(tab.locator("#wb-drafts")).to_contain_text("skill tidy_tools v1 · draft")
    expect(tab.locator("#wb-execute")).to_be_disabled()  # an operation executes once
    assert not script_errors(tab), tab.console_errors
    assert not [u for u in tab.server_errors if "/api/v1/assistant/" in u], tab.server_errors


def test_a_name_over_the_limit_is_refused_at_plan_time_and_shown_on_the_slots(tab, server):
    """A 120-character name was planned, previewed whole and stored cut to 100 characters; the
    plan is now refused with the field named, and the slots box is marked until it is fixed."""
    server.create_user("wendy", "pw-wendy-123456", "operator")
    sign_in(tab, "wendy", "pw-wendy-123456", next_path="/assistant/workbench/")
    tab.fill("#wb-text", "Create a skill called tidy_tools")
    tab.get_by_role("button", name="Resolve").click()
    expect(tab.locator("#wb-intent")).to_have_value("create_skill")

    tab.fill("#wb-slots", json.dumps({"name": "tidy_" + "t" * 115}))
    tab.get_by_role("button", name="Plan").click()
    expect(tab.locator("#wb-error")).to_have_text("slots.name: a draft's name has at most 100 characters (120 given).")
    expect(tab.locator("#wb-slots")).to_have_attribute("aria-invalid", "true")
    expect(tab.locator("#wb-slots")).to_be_focused()
    expect(tab.locator("#wb-planned")).to_be_hidden()

    tab.fill("#wb-slots", json.dumps({"name": "tidy_tools"}))
    tab.get_by_role("button", name="Plan").click()
    expect(tab.locator("#wb-planned")).to_be_visible()
    expect(tab.locator("#wb-preview")).to_contain_text("tidy_tools")
    expect(tab.locator("#wb-error")).to_be_hidden()
    assert tab.get_attribute("#wb-slots", "aria-invalid") is None
    assert not script_errors(tab), tab.console_errors


def _order_with_rca(server, title: str, engine: str) -> int:
    """A detected order on P-02; `fake`: the offline Investigator runs for real; otherwise a run
    recorded with that engine whose RCA is applied as the Investigator's."""
    code = (
        "from core.models import AgentRun\n"
        "from tests.workorders import factories as f\n"
        "from workorders.services.agent_results import work_order_apply_rca\n"
        "from workorders.services.investigation import work_order_investigate\n"
        "cell = f.make_cell('P-02'); f.make_kb(cell)\n"
        f"wo = f.make_work_order(cell, title={title!r})\n"
        f"if {engine!r} == 'fake':\n"
        "    work_order_investigate(work_order_id=wo.pk)\n"
        "else:\n"
        f"    AgentRun.objects.create(agent='investigator', turn_id='t', engine={engine!r},"
        " subject_type='work_order', subject_id=str(wo.pk), status='finished')\n"
        "    work_order_apply_rca(work_order=wo, agent='investigator', actor=None,"
        " rca={'root_cause': 'bearing_wear: vibration up with bearing temperature.', 'confidence': 0.8})\n"
        "print('WO', wo.pk)\n"
    )
    return int(re.search(r"WO (\d+)", server.manage("shell", "-c", code)).group(1))


def test_the_rca_cards_mark_an_offline_rca_and_not_a_real_providers(tab, server):
    offline = _order_with_rca(server, "offline RCA", "fake")
    real = _order_with_rca(server, "real RCA", "anthropic")
    server.create_user("olga", "pw-olga-123456", "operator")
    sign_in(tab, "olga", "pw-olga-123456", next_path="/")

    offline_card = tab.locator(f"#work-order-{offline}")
    expect(offline_card.locator(".wo-rca")).to_be_visible()
    expect(offline_card.locator(".wo-rca .offline-mark")).to_have_text("offline demo engine")
    real_card = tab.locator(f"#work-order-{real}")
    expect(real_card.locator(".wo-rca")).to_be_visible()
    expect(real_card.locator(".offline-mark")).to_have_count(0)

    tab.goto(f"/workorders/{offline}/")
    expect(tab.locator("#wo-rca-title .offline-mark")).to_have_text("offline demo engine")
    expect(tab.locator("#wo-evidence .aria-diag .offline-mark")).to_have_count(1)
    tab.goto(f"/workorders/{real}/")
    expect(tab.locator("#wo-rca .wo-rca-summary")).to_contain_text("bearing_wear")
    expect(tab.locator(".offline-mark")).to_have_count(0)
    # the shared renderers the drawer and the activity feed use: marked only when told offline
    marks = tab.evaluate(
        """() => {
          const count = (name, props) => AriaRender.component(name, props).querySelectorAll(".offline-mark").length;
          const wo = (engine) => ({ work_order: { id: 1, rca_summary: "bearing_wear", rca_engine: engine } });
          return [count("work_order_card", wo({ engine: "fake", real_provider: false })),
                  count("work_order_card", wo({ engine: "anthropic", real_provider: true })),
                  count("work_order_card", wo(null)),
                  count("diagnosis_card", { cell_tag: "P-02", title: "Diagnosis", offline: true }),
                  count("diagnosis_card", { cell_tag: "P-02", title: "Diagnosis" })];
        }"""
    )
    assert marks == [1, 0, 0, 1, 0]
    assert not script_errors(tab), tab.console_errors
    assert not [u for u in tab.server_errors if "/workorders/" in u or "control-room" in u], tab.server_errors


def test_first_load_without_a_planned_operation_logs_no_console_error(tab, server):
    # Given an operator who never planned anything (plans/latest would answer 404: nothing waits)
    server.create_user("fiona", "pw-fiona-123456", "operator")
    latest: list[str] = []
    tab.on("request", lambda r: latest.append(r.url) if "/plans/latest" in r.url else None)
    sign_in(tab, "fiona", "pw-fiona-123456", next_path="/assistant/workbench/")
    expect(tab.locator("#wb-planned")).to_be_hidden()
    tab.wait_for_load_state("networkidle")
    # then the page does not ask for it, and the console stays clean (not even the browser's 404 line)
    assert latest == [] and tab.console_errors == [], (latest, tab.console_errors)


def test_a_draft_made_without_a_session_is_in_the_drawer_to_validate(tab, server):
    """The workbench's default, "No session", created a draft no page listed: the drawer showed only
    the open session's drafts, so the link 'Open the drafts in Ask ARIA' led nowhere."""
    server.create_user("nora", "pw-nora-123456", "operator")
    sign_in(tab, "nora", "pw-nora-123456", next_path="/assistant/workbench/")
    expect(tab.locator("#wb-session")).to_have_value("")  # the default
    tab.fill("#wb-text", 'Create a skill called loose_ends: "Close every open point before the handover."')
    tab.get_by_role("button", name="Resolve").click()
    expect(tab.locator("#wb-intent")).to_have_value("create_skill")
    tab.get_by_role("button", name="Plan").click()
    tab.check("#wb-confirm")
    tab.get_by_role("button", name="Execute").click()
    expect(tab.locator("#wb-result")).to_contain_text("Your drafts outside a session")

    tab.locator("#wb-result a").click()
    expect(tab).to_have_url(re.compile(r"/assistant/$"))
    tab.select_option("#aria-mode", "build")
    loose = tab.locator("#aria-draft-loose")
    expect(loose).to_be_visible()
    row = loose.locator(".aria-draft", has_text="skill loose_ends v1")
    expect(row.locator(".aria-badge")).to_have_text("draft")
    row.get_by_role("button", name="Validate").click()
    expect(row.locator(".aria-badge")).to_have_text("validated")
    expect(tab.locator("#aria-draft-list .aria-draft")).to_have_count(0)  # not this session's
    assert not script_errors(tab), tab.console_errors
