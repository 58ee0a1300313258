"""Every page in the top navigation, walked by each role the demo has (operator, approver, both,
admin): a page that renders for a role (not its 403 page, which is by design) must make no API call
that fails (status >= 400) and log no console error, with the Ask ARIA drawer open (and a waiting
draft's reviews opened) too; no page answers 5xx. It guards the defect class found on 7 Dec 2026: an
approver-only user got 403s from a route (draft reviews) the drawer shown to them called."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_up

pytestmark = pytest.mark.browser

SEED = """
from sentinel.models import Cell, Line, Site
from workorders.models import WorkOrder
site, _ = Site.objects.get_or_create(name="Role walk site")
line, _ = Line.objects.get_or_create(site=site, name="Role walk line")
cell, _ = Cell.objects.get_or_create(tag="RWALK-01", defaults={"line": line, "name": "Role walk pump", "equipment_type": "pump"})
order = WorkOrder.objects.filter(cell=cell, title="Role walk order").first()
if order is None:
    order = WorkOrder.objects.create(cell=cell, title="Role walk order", status="open", priority="medium")
from django.contrib.auth.models import Group, User
from assistant.services.drafts import draft_create, draft_test, draft_validate
author, made = User.objects.get_or_create(username="rw-walk-author")
author.groups.add(Group.objects.get_or_create(name="operator")[0])
if made:  # a draft waiting for review: the approvers' queue in the drawer has a row to open
    spec = {"agent": "investigator", "text": "List 3 hypotheses. Finish by calling submit_rca.", "variables": []}
    draft = draft_create(owner=author, type="prompt", name="rw-walk-review", spec=spec)
    draft_test(draft=draft_validate(draft=draft, actor=author), actor=author)
print(cell.pk, order.pk)
"""

ROLES = {
    "operator": ("operator",),
    "approver": ("approver",),
    "operator-approver": ("operator", "approver"),
    "admin": ("admin",),
}
PAGES = [
    "/",
    "/shift/",
    "/plans/",
    "/assistant/",
    "/assistant/workbench/",
    "/alarms/performance/",
    "/events/",
    "/equipment/{cell}/",
    "/workorders/{order}/",
]


@pytest.fixture(scope="module")
def seeded(aria_server) -> dict[str, str]:
    cell, order = aria_server.manage("shell", "-c", SEED).strip().splitlines()[-1].split()
    return {"cell": cell, "order": order}


def settle(page: Any) -> None:
    """Wait for the page's first requests (and those they start) to be answered."""
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    page.wait_for_load_state("networkidle")


def walk(page: Any, path: str, failed: list[str]) -> tuple[int, list[str], list[str]]:
    """Open `path`, then the drawer; returns the page's status, its failing API calls and console errors."""
    failed.clear()
    page.console_errors.clear()
    response = page.goto(path)
    status = response.status if response else 0
    settle(page)
    toggle = page.locator("#aria-ask-toggle")
    if status < 400 and toggle.count():
        if toggle.get_attribute("aria-expanded") != "true":  # /assistant/ opens it itself
            toggle.click()
        expect(page.locator("#aria-drawer")).to_be_visible()
        settle(page)
        reviews = page.locator("#aria-drawer details.aria-reviews > summary")
        for index in range(reviews.count()):  # a draft's earlier reviews load when opened
            if reviews.nth(index).is_visible():
                reviews.nth(index).click()
        if reviews.count():
            settle(page)
    return status, list(failed), list(page.console_errors)


@pytest.mark.parametrize("role", list(ROLES))
def test_every_page_shown_to_a_role_makes_no_failing_api_call_and_logs_no_console_error(
    tabs, aria_server, seeded, role
):
    page = tabs()
    failed: list[str] = []
    page.on(
        "response",
        lambda r: (
            failed.append(f"{r.status} {r.request.method} {r.url}") if "/api/" in r.url and r.status >= 400 else None
        ),
    )
    sign_up(page, aria_server, f"rw-walk-{role}", "/", *ROLES[role])

    problems: dict[str, Any] = {}
    shown = []
    for template in PAGES:
        path = template.format(**seeded)
        status, api_failures, console_errors = walk(page, path, failed)
        assert status < 500, f"{role}: {path} answered {status}"
        if status == 403:  # a page the role is not given: its 403 page is by design
            continue
        shown.append(path)
        if api_failures or console_errors:
            problems[path] = {"api": api_failures, "console": console_errors}
    assert "/" in shown and "/assistant/" in shown, shown
    if role == "approver":  # the seeded draft was in the queue the walk opened
        expect(page.locator("#aria-review-list .aria-draft").filter(has_text="rw-walk-review")).to_have_count(1)
    assert not problems, f"{role}: {problems}"
