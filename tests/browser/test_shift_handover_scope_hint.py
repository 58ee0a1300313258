"""A signed handover tells an operator who may acknowledge it "waiting for your acknowledgement";
an approver without the operator scope was told so too, but is offered no Acknowledge button (the
API refuses them): the hint now follows the same rule as the button."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import sign_up

pytestmark = pytest.mark.browser

SIGNED = """
from django.contrib.auth.models import User
from django.utils import timezone
from workorders.models import ShiftHandover
now = timezone.now()
outgoing, _ = User.objects.get_or_create(username="h4-hint-out")
ShiftHandover.objects.create(date=now.date(), shift="night", period_start=now - timedelta(hours=8), period_end=now,
    status="signed", outgoing=outgoing, report="P-02 watched: <b>vibration</b> 4.9 mm/s", signed_at=now)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Its own server: a signed handover on the shared one would be in test_shift_handover's lists."""
    server = start_live_server(tmp_path_factory.mktemp("handover-hint"))
    server.manage("shell", "-c", "from datetime import timedelta\n" + SIGNED)
    yield server
    server.stop()


@pytest.mark.parametrize(
    ("username", "scope", "hinted"), [("h4-hint-appr", "approver", False), ("h4-hint-op", "operator", True)]
)
def test_only_someone_who_may_acknowledge_is_told_a_handover_waits_for_them(page, server, username, scope, hinted):
    sign_up(page, server, username, "/shift/", scope)
    row = page.locator("#handover-list li").filter(has_text="h4-hint-out")
    expect(row.first).to_be_visible()
    expect(row.first.locator(".handover-hint")).to_have_count(1 if hinted else 0)
    row.first.locator(".handover-open").click()
    expect(page.locator("#handover-detail")).to_be_visible()
    ack = expect(page.locator("#handover-ack"))
    if hinted:
        ack.to_be_visible()
    else:
        ack.to_be_hidden()
