"""The Plans page's "Only on" field with a tag no cell has: the form says why (the API's 422 names
the field and the tag) and no plan is drafted. Before, the plan was drafted with its steps left out
by the guidance, and nothing on the page named the tag."""

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_in

pytestmark = pytest.mark.browser
PLANS_OF = "from orchestrator.models import Plan; print(Plan.objects.filter(owner__username='{user}').count())"


def test_only_on_an_unknown_cell_shows_the_error_and_drafts_nothing(page, aria_server):
    user = "onlyon-uma"
    aria_server.create_user(user, "only-on-pass-1", "operator")
    sign_in(page, user, "only-on-pass-1", next_path="/plans/")
    page.fill("#plans-new input[name=goal]", "Investigate all open alarms and prepare work orders")
    page.fill("#plans-new input[name=guidance]", "NONEXISTENT-CELL")
    page.click("#plans-new button[type=submit]")

    message = page.locator("#plans-msg")
    expect(message).to_be_visible()
    expect(message).to_contain_text("constraints.cells: no cell is tagged NONEXISTENT-CELL")
    expect(page.locator("#plans-new input[name=guidance]")).to_have_value("NONEXISTENT-CELL")  # kept to correct
    assert aria_server.manage("shell", "-c", PLANS_OF.format(user=user)).strip().splitlines()[-1] == "0"
