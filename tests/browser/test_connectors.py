"""The admin's connector list follows a real connector: `manage.py run_connectors` (its own
process, as in production) against an asyncua server this test runs. The status column reads
connected, then error once the server stops (with the reason), then connected again."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import free_port, start_live_server
from tests.browser.tabs import open_tab
from tests.sentinel.test_connectors_opcua import NODE_ID, OpcUaTestServer

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
LIST = "/admin/sentinel/connector/"


def _setup_code(url: str) -> str:
    return (
        "from django.contrib.auth.models import User\n"
        "from sentinel.models import Cell, Connector, ConnectorTag, Line, SignalDefinition, Site\n"
        "User.objects.create_superuser('ada', password='connector-admin-1')\n"
        "line = Line.objects.create(site=Site.objects.create(name='Plant'), name='L1')\n"
        "cell = Cell.objects.create(line=line, tag='P-02', name='Pump', onboarding_complete=True)\n"
        "signal = SignalDefinition.objects.create(cell=cell, key='vibration_mm_s', display_name='Vibration', alert=4.5)\n"
        f"connector = Connector.objects.create(name='line-1-opcua', kind='opcua', endpoint={url!r})\n"
        f"ConnectorTag.objects.create(connector=connector, source={NODE_ID!r}, signal=signal)\n"
    )


@pytest.fixture(scope="module")
def plant(tmp_path_factory):
    opcua = OpcUaTestServer(free_port())
    opcua.start()
    server = start_live_server(tmp_path_factory.mktemp("connectors"), {"ARIA_ENGINE": "fake"})
    server.manage("shell", "-c", _setup_code(opcua.url))
    log = (Path(server.log_path).parent / "connectors.log").open("w")
    connectors = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "run_connectors"],
        cwd=ROOT,
        env=server.env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    yield server, opcua
    connectors.terminate()
    connectors.wait(15)
    server.stop()
    opcua.stop()


def _column_shows(
    page, column: str, text: str, *, negate: bool = False, contains: bool = False, timeout: float = 45.0
) -> None:
    """The admin list is a plain page: reload it until the row's `column` shows `text` (or
    contains it, or with `negate` shows anything else)."""
    deadline = time.monotonic() + timeout
    cell = page.locator(f"tr:has-text('line-1-opcua') td.field-{column}")
    while time.monotonic() < deadline:
        page.goto(LIST)
        shown = cell.inner_text().strip()
        if ((text in shown) if contains else (shown == text)) != negate:
            return
        time.sleep(1)
    if negate:
        expect(cell).not_to_have_text(text)
    if contains:
        expect(cell).to_contain_text(text)
    expect(cell).to_have_text(text)  # fails with what it shows instead


def _status_becomes(page, text: str) -> None:
    _column_shows(page, "status", text)


def test_the_admin_shows_a_connector_go_from_connected_to_error_and_back(browser, plant):
    server, opcua = plant
    page = open_tab(browser, server)
    page.goto(f"/admin/login/?next={LIST}")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "connector-admin-1")
    page.click("input[type=submit]")
    expect(page.locator("#result_list")).to_be_visible()

    _status_becomes(page, "connected")
    _column_shows(page, "last_message_at", "-", negate=True)  # the initial value arrived

    opcua.stop()
    _status_becomes(page, "error")
    _column_shows(page, "last_error", opcua.url, contains=True)  # the reason names the endpoint

    opcua.start()
    _status_becomes(page, "connected")
    assert not page.console_errors
