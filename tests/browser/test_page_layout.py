"""Layout with hostile or ordinary user text, in headless Chromium: the Plans page keeps to the width
of the window with a 2,000-character goal and guidance without spaces."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import open_tab, sign_in

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("page-layout"), {"ARIA_ENGINE": "fake"})
    server.manage("seed_demo")
    yield server
    server.stop()


@pytest.fixture
def tab(browser, server):
    page = open_tab(browser, server)
    yield page
    page.context.close()


def login(page: Any, server: Any, username: str, next_path: str, *scopes: str) -> None:
    server.create_user(username, f"pw-{username}-123456", *scopes)
    sign_in(page, username, f"pw-{username}-123456", next_path=next_path)


def page_width(page: Any) -> dict[str, int]:
    return page.evaluate("({scroll: document.scrollingElement.scrollWidth, view: window.innerWidth})")


def test_a_long_goal_and_guidance_without_spaces_wrap_inside_the_plans_page(tab, server):
    login(tab, server, "pl-long", "/plans/", "operator")
    goal, where = "G" * 2000, "C" * 1500
    tab.fill("#plans-new input[name=goal]", goal)
    tab.fill("#plans-new input[name=guidance]", where)
    tab.fill("#plans-new input[name=done_when]", "D" * 1000)
    tab.click("#plans-new button[type=submit]")
    plan = tab.locator("article.plan").first
    expect(plan.locator(".plan-goal")).to_have_text(goal)
    expect(plan.locator(".plan-guidance")).to_contain_text(where)

    size = page_width(tab)
    assert size["scroll"] <= size["view"], size  # no sideways scrolling (was ~775,000 px)
    article = plan.bounding_box()
    for part in (".plan-goal", ".plan-guidance"):
        box = plan.locator(part).bounding_box()
        assert box["x"] + box["width"] <= article["x"] + article["width"] + 1, (part, box, article)
    assert not tab.console_errors, tab.console_errors
