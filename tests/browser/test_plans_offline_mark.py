"""The Plans page marks a plan the offline demo engine drafted (planner `model` on the fake engine):
the same "offline demo engine" mark as other pages, from the API's `offline` (the engine that
planned it); a heuristic plan, which ran no model, carries none."""

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_in


@pytest.mark.browser
def test_a_model_plan_from_the_offline_engine_is_marked(page, aria_server):
    aria_server.create_user("omar", "plans-offline-pass-1", "operator")
    # sign_in waits for the page's deferred scripts: a submit before plans.js has bound the form
    # is a plain GET of /plans/?goal=… (seen once on a loaded machine: "No plans yet")
    sign_in(page, "omar", "plans-offline-pass-1", next_path="/plans/")

    page.fill("#plans-new input[name=goal]", "What is on the backlog?")
    page.click("#plans-new button[type=submit]")
    heuristic = page.locator("article.plan").first
    expect(heuristic.locator(".plan-status")).to_have_text("draft")
    expect(heuristic.locator(".offline-mark")).to_have_count(0)

    page.fill("#plans-new input[name=goal]", "What is on the backlog today?")
    page.select_option("#plans-new select[name=planner]", "model")
    page.click("#plans-new button[type=submit]")
    modelled = page.locator("article.plan", has_text="What is on the backlog today?")
    expect(modelled.locator(".plan-status")).to_have_text("draft")
    expect(modelled.locator(".plan-head .offline-mark")).to_have_text("offline demo engine")
    expect(modelled.locator(".offline-mark")).to_have_attribute("data-engine", "fake")
    expect(
        page.locator("article.plan", has_text="What is on the backlog?").last.locator(".offline-mark")
    ).to_have_count(0)
