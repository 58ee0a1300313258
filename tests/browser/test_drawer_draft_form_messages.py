"""The drawer's new-draft form says in words what is wrong with the name or the spec: a blank or
markup name was answered with the server's regular expression, bad JSON with the parser's message
alone (not naming the spec). Nothing is sent and nothing typed is lost."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import drawer_login

pytestmark = pytest.mark.browser

RULE = "Name: letters, digits, _ or - (starting with a letter or digit), up to 100 characters."


def test_the_new_draft_form_names_the_rule_and_sends_nothing_until_it_is_met(page, aria_server):
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.method == "POST" and r.url.endswith("/drafts") else None)
    drawer_login(page, aria_server, "h4-draft-form", "operator")
    page.select_option("#aria-mode", "build")
    page.locator(".aria-draft-create summary").click()
    page.select_option("#aria-draft-type", "skill")
    status = page.locator("#aria-draft-new-status")

    for name in ("   ", "<img src=x onerror=alert(1)>", "n" * 101):
        page.fill("#aria-draft-name", name)
        page.get_by_role("button", name="Create draft").click()
        expect(status).to_have_text(RULE)
    page.fill("#aria-draft-name", "h4_skill")
    spec = page.input_value("#aria-draft-spec")
    page.fill("#aria-draft-spec", "{not json")
    page.get_by_role("button", name="Create draft").click()
    expect(status).to_contain_text("Spec is not valid JSON:")
    assert not sent, sent
    expect(page.locator("#aria-draft-spec")).to_have_value("{not json")  # kept to be fixed

    page.fill("#aria-draft-spec", spec)
    page.get_by_role("button", name="Create draft").click()
    expect(page.locator("#aria-draft-list")).to_contain_text("skill h4_skill v1")
    expect(status).to_have_text("")
