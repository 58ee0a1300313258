"""The alarm-performance page on a replayed flood: the rate chart draws the flood band and the
target/flood lines, the bad-actor chart its ten bars, and one click on a tuning suggestion drafts
the gated `sentinel.change_signal_limits` plan, which the Plans page then shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import open_tab, sign_in

pytestmark = pytest.mark.browser
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "alarm-performance.png"
# The flood scenario, replayed through the ingest service three hours ago (tests/sentinel/test_performance_replay.py).
REPLAY = (
    "from datetime import timedelta\n"
    "from django.utils import timezone\n"
    "from tests.sentinel.test_performance_replay import replay_flood\n"
    "replay_flood((timezone.now() - timedelta(hours=3)).replace(microsecond=0))\n"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("alarm-performance"), {"ARIA_ENGINE": "fake"})
    server.manage("shell", "-c", REPLAY)
    server.create_user("opal", "perf-operator-1", "operator")
    server.create_user("h1-april", "perf-approver-1", "approver")
    yield server
    server.stop()


def test_the_page_shows_the_flood_and_the_bad_actors_and_plans_a_tuning(browser, server):
    page = open_tab(browser, server, height=1400)
    sign_in(page, "opal", "perf-operator-1", next_path="/alarms/performance/")
    expect(page.locator("#perf-status")).to_have_attribute("data-status", "open")
    expect(page.locator("nav a[aria-current=page]")).to_have_text("Alarm performance")

    rate = page.locator("#perf-rate-svg")
    expect(rate.locator("rect.flood-band")).to_have_count(1)
    expect(rate.locator("line.line-flood")).to_have_count(1)
    expect(rate.locator("line.line-target")).to_have_count(1)
    expect(rate.locator("rect.rate-bar.over-flood").first).to_be_visible()
    expect(page.locator("#perf-floods .flood-item")).to_contain_text("peak")

    bars = page.locator("#perf-actors-svg rect.bad-actor-bar")
    expect(bars).to_have_count(10)
    expect(bars.first).to_have_attribute("data-signal", "P-02.motor_current_a")
    expect(
        page.locator('#perf-actors-svg rect.bad-actor-bar.chattering[data-signal="C-01.discharge_pressure_bar"]')
    ).to_have_count(1)
    expect(page.locator("#perf-chattering")).to_contain_text("C-01")
    expect(page.locator("#perf-fleeting li").first).to_contain_text("P-02")

    suggestion = page.locator('li.suggestion[data-signal="P-02.motor_current_a"]')
    expect(suggestion.locator(".suggestion-title")).to_contain_text("on-delay")
    expect(suggestion.locator(".suggestion-evidence")).to_contain_text("cleared within 5 s")
    expect(page.locator("#perf-suggestions-empty")).to_be_hidden()
    # states read as words (the model's labels), never the stored value such as active_unack
    for name in ("standing", "shelved", "out_of_service"):
        assert "_" not in page.locator(f"#perf-{name}").inner_text(), page.locator(f"#perf-{name}").inner_text()
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    suggestion.get_by_role("button", name="Create limit-change plan").click()
    done = suggestion.locator(".suggestion-done")
    expect(done).to_contain_text("drafted (gated limit change)")
    expect(suggestion.get_by_role("button", name="Create limit-change plan")).to_be_disabled()

    done.get_by_role("link", name="Review it on Plans").click()
    plan = page.locator("article.plan").first
    expect(plan.locator(".plan-status")).to_have_text("draft")
    change = plan.locator("li", has=page.locator(".step-cap", has_text="sentinel.change_signal_limits"))
    expect(change.locator(".step-inputs").first).to_contain_text("on_delay_seconds")
    expect(change.locator(".step-inputs").first).to_contain_text("motor_current_a")
    assert not page.console_errors, page.console_errors
    page.context.close()


def test_no_tuning_suggestion_is_a_sentence_not_a_numbered_item(browser, server):
    page = open_tab(browser, server)
    sign_in(page, "opal", "perf-operator-1", next_path="/alarms/performance/")
    expect(page.locator("#perf-status")).to_have_attribute("data-status", "open")
    # the flood was three hours ago: the last hour has no bad actor to tune
    page.select_option("#perf-window select[name=hours]", "1")
    expect(page.locator("#perf-suggestions-empty")).to_be_visible()
    expect(page.locator("#perf-suggestions-empty")).to_have_text("No tuning suggestion for these bad actors.")
    expect(page.locator("#perf-suggestions")).to_be_hidden()
    expect(page.locator("#perf-suggestions li")).to_have_count(0)
    page.context.close()


def test_an_approver_reads_the_suggestions_without_a_button_the_api_refuses(browser, server):
    """Drafting the plan (POST /api/v1/aria/plans) needs the operator scope: the approver was offered
    the button and got 'Requires scope: operator.' on a click."""
    page = open_tab(browser, server, height=1400)
    sign_in(page, "h1-april", "perf-approver-1", next_path="/alarms/performance/")
    expect(page.locator("#perf-status")).to_have_attribute("data-status", "open")
    suggestion = page.locator('li.suggestion[data-signal="P-02.motor_current_a"]')
    expect(suggestion.locator(".suggestion-title")).to_contain_text("on-delay")
    expect(suggestion.locator(".suggestion-needs-operator")).to_have_text(
        "Creating the limit-change plan needs the operator scope."
    )
    expect(page.get_by_role("button", name="Create limit-change plan")).to_have_count(0)
    assert not page.console_errors, page.console_errors
    page.context.close()
