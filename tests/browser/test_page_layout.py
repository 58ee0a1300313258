"""Layout with hostile or ordinary user text, in headless Chromium: the Plans page keeps to the width
of the window with a 2,000-character goal and guidance without spaces; the work order's completion
form stacks each label above a field of a readable width."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import sign_up

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("page-layout"), {"ARIA_ENGINE": "fake"})
    server.manage("seed_demo")
    yield server
    server.stop()


def page_width(page: Any) -> dict[str, int]:
    return page.evaluate("({scroll: document.scrollingElement.scrollWidth, view: window.innerWidth})")


def test_a_long_goal_and_guidance_without_spaces_wrap_inside_the_plans_page(page, server):
    sign_up(page, server, "pl-long", "/plans/", "operator")
    goal, where = "G" * 2000, "C" * 1500
    page.fill("#plans-new input[name=goal]", goal)
    page.fill("#plans-new input[name=guidance]", where)  # no cell has that tag (b3b3064): refused, named
    page.fill("#plans-new input[name=done_when]", "D" * 1000)
    page.click("#plans-new button[type=submit]")
    message = page.locator("#plans-msg")
    expect(message).to_contain_text(f"constraints.cells: no cell is tagged {where}")
    assert_no_sideways_scroll(page, message)

    page.fill("#plans-new input[name=guidance]", "P-02")
    page.click("#plans-new button[type=submit]")
    plan = page.locator("article.plan").first
    expect(plan.locator(".plan-goal")).to_have_text(goal)
    expect(plan.locator(".plan-guidance")).to_contain_text("P-02")
    assert_no_sideways_scroll(page, plan.locator(".plan-goal"))
    article, box = plan.bounding_box(), plan.locator(".plan-goal").bounding_box()
    assert box["x"] + box["width"] <= article["x"] + article["width"] + 1, (box, article)
    unexpected = [e for e in page.console_errors if "status of 422" not in e]  # the refused draft's answer
    assert not unexpected, page.console_errors


def assert_no_sideways_scroll(page: Any, element: Any) -> None:
    size = page_width(page)
    assert size["scroll"] <= size["view"], size  # no sideways scrolling (was ~775,000 px)
    box = element.bounding_box()
    assert box["x"] + box["width"] <= size["view"] + 1, (box, size)


ORDER = """
from sentinel.models import Cell
from workorders.models import WorkOrder
cell = Cell.objects.get(tag="P-02")
print(WorkOrder.objects.create(cell=cell, title="layout", status="in_progress", priority="medium").pk)
"""


def test_the_completion_form_stacks_each_label_above_its_field(page, server):
    order = server.manage("shell", "-c", ORDER).strip().splitlines()[-1]
    sign_up(page, server, "wo-form", f"/workorders/{order}/", "operator")
    page.locator(".btn-complete").click()
    form = page.locator(".wo-complete-form")
    expect(form.locator("textarea[name='work_done']")).to_be_visible()
    width = form.bounding_box()["width"]
    for name in ("work_done", "problem_code", "cause_code", "remedy_code", "rca_verdict", "actual_root_cause"):
        label = form.locator(".wo-label").filter(has=page.locator(f"[name='{name}']"))
        text = label.locator("span").first.bounding_box()
        field = label.locator(f"[name='{name}']").bounding_box()
        assert text["y"] + text["height"] <= field["y"] + 1, (name, text, field)  # the label above its field
        assert abs(text["x"] - field["x"]) < 2, (name, text, field)  # aligned on the left
        assert field["width"] >= 0.6 * width, (name, field, width)  # a readable width, not a stub
    hours = form.locator("input[name='labour_hours']").bounding_box()
    assert form.locator(".btn-complete-confirm").bounding_box()["y"] >= hours["y"] + hours["height"]
    size = page_width(page)
    assert size["scroll"] <= size["view"], size
    assert not page.console_errors, page.console_errors
