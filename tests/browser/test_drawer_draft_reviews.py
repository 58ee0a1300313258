"""The drawer's review queue shows an approver the draft's earlier reviews before they decide: an
approver without the operator scope opens "reviews" on a resubmitted draft and reads who rejected
the earlier candidate and why (GET /assistant/drafts/{id}/reviews, which asked for the operator
scope: the panel showed the 403's message). A reason is text, never markup."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import drawer_login

pytestmark = pytest.mark.browser

REASON = "Too generic <img src=x onerror=alert(1)>: narrow it to one cell."

SETUP = f"""
from django.contrib.auth.models import Group, User
from assistant.services.drafts import draft_create, draft_reject, draft_test, draft_update, draft_validate
def user(name, scope):
    u = User.objects.create_user(username=name, password='pw-' + name + '-123456')
    u.groups.add(Group.objects.get_or_create(name=scope)[0])
    return u
author, first = user('rhea', 'operator'), user('abe', 'approver')
spec = {{'agent': 'investigator', 'text': 'List 3 hypotheses. Finish by calling submit_rca.', 'variables': []}}
d = draft_create(owner=author, type='prompt', name='triage-review', spec=spec)
d = draft_test(draft=draft_validate(draft=d, actor=author), actor=author)
d = draft_reject(draft=d, actor=first, reason={REASON!r})
d = draft_update(draft=d, actor=author, spec={{**spec, 'text': 'List 3 hypotheses, one cell. Finish by calling submit_rca.'}})
d = draft_test(draft=draft_validate(draft=d, actor=author), actor=author)
print('STATUS', d.status, d.version)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("drawer-draft-reviews"), {"ARIA_ENGINE": "fake"})
    yield server
    server.stop()


def test_an_approver_who_is_not_an_operator_reads_the_earlier_rejection_before_deciding(tabs, server):
    assert "STATUS tested 2" in server.manage("shell", "-c", SETUP)
    ava = tabs()
    alerts: list[str] = []
    ava.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    drawer_login(ava, server, "ava", "approver")
    row = ava.locator("#aria-review-list .aria-draft").filter(has_text="prompt triage-review v2")
    expect(row.get_by_role("button", name="Approve")).to_be_visible()

    row.locator(".aria-reviews summary").click()
    entry = row.locator(".aria-review-entry")
    expect(entry).to_have_count(1)
    expect(entry).to_contain_text("reject by abe · v1")
    expect(entry).to_contain_text("an earlier candidate: edited since")
    expect(entry.locator(".aria-review-reason")).to_have_text(REASON)
    expect(row.locator(".aria-reviews .aria-error")).to_have_count(0)
    expect(ava.locator("#aria-drawer img")).to_have_count(0)

    # deciding: the row is redrawn live; the panel stays open with the new decision on top
    row.locator(".aria-decision-reason").fill("Fine now.")
    row.get_by_role("button", name="Approve").click()
    expect(row.locator(".aria-badge")).to_have_text("approved")
    expect(row.locator(".aria-review-entry")).to_have_count(2)
    expect(row.locator(".aria-review-entry").first).to_contain_text("approve by ava · v2")
    assert alerts == []
    assert not [e for e in ava.console_errors if "Content Security Policy" in e], ava.console_errors
