"""Log in through the login page, open the Control Room, and watch server-published events arrive."""

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.sync_api import expect

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "control-room-shell.png"


@pytest.mark.browser
def test_login_and_see_live_events(page, aria_server):
    aria_server.create_user("carla", "control-room-pass-1", "operator")
    console_errors: list[str] = []
    page.on("console", lambda msg: console_errors.append(msg.text) if msg.type == "error" else None)

    # Given a signed-out operator, the live feed sends her to the login page.
    page.goto("/events/")
    expect(page).to_have_url(f"{aria_server.url}/login/?next=/events/")
    page.fill("#id_username", "carla")
    page.fill("#id_password", "control-room-pass-1")
    page.click("#login-submit")

    # The shell connects to /ws/events and fills the access badge from /api/v1/me.
    expect(page).to_have_url(f"{aria_server.url}/events/")
    expect(page.locator("#ws-status")).to_have_attribute("data-status", "open")
    expect(page.locator("#access-badge")).to_have_attribute("data-loaded", "true")
    expect(page.locator("#access-badge .scope-operator")).to_have_text("operator")

    # When the server publishes from a worker thread in the web process (the fast path) ...
    aria_server.publish(
        "anomaly_detected",
        {
            "cell_id": 3,
            "signal_def_id": 12,
            "value": 97.4,
            "threshold": 90.0,
            "work_order_id": 41,
            "time": "2026-11-30T04:30:00Z",
            "severity": "trip",
            "direction": "high",
        },
    )
    # ... and another process writes to the same database (delivered by the outbox tail) ...
    aria_server.manage(
        "shell",
        "-c",
        "from django.db import transaction\n"
        "from core.events import publish\n"
        "with transaction.atomic(): publish('work_order_ready', {'work_order_id': 41})\n",
    )

    # ... both appear in the live feed, newest first, and data is shown as text.
    feed = page.locator("#live-feed .feed-row")
    expect(feed.filter(has_text="anomaly_detected")).to_have_count(1)
    expect(feed.filter(has_text="work_order_ready")).to_have_count(1)
    expect(feed.first).to_have_attribute("data-event-type", "work_order_ready")
    expect(feed.filter(has_text="anomaly_detected")).to_contain_text("severity")

    # An event carrying markup is rendered as text, never as HTML.
    aria_server.publish("agent_start", {"agent": "<img src=x id=injected>", "turn_id": "t-1"})
    expect(feed.filter(has_text="<img src=x id=injected>")).to_have_count(1)
    assert page.locator("#injected").count() == 0

    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert not [e for e in console_errors if "Content Security Policy" in e], console_errors


@pytest.mark.browser
def test_feed_reconnects_and_replays_missed_events(page, aria_server):
    """A frame lost on the wire comes back through ?after= replay when the client reconnects."""
    aria_server.create_user("remy", "control-room-pass-2", "operator")
    sockets: list[dict] = []

    def proxy(ws) -> None:
        # Sit between the page and the server so the test can lose frames and drop the socket.
        server = ws.connect_to_server()
        entry = {"url": ws.url, "page": ws, "server": server, "lose": False}
        server.on_message(lambda message: None if entry["lose"] else ws.send(message))
        ws.on_message(server.send)
        sockets.append(entry)

    page.route_web_socket(re.compile(r".*/ws/events.*"), proxy)
    page.goto("/login/?next=/events/")
    page.fill("#id_username", "remy")
    page.fill("#id_password", "control-room-pass-2")
    page.click("#login-submit")
    expect(page.locator("#ws-status")).to_have_attribute("data-status", "open")
    aria_server.publish("work_order_ready", {"work_order_id": 9000})
    seen = page.locator("#live-feed .feed-row", has_text="9000")
    expect(seen).to_have_count(1)
    last_id = int(seen.get_attribute("data-event-id"))

    # Given the next frame is lost on the wire (every socket of the page: the nav badge has one too) ...
    first = list(sockets)
    for entry in first:
        entry["lose"] = True
    published = datetime.now(UTC)
    aria_server.publish("work_order_ready", {"work_order_id": 9001})
    page.wait_for_timeout(1500)  # the live frame (and the 1 s outbox tail) went into the void
    assert page.locator("#live-feed .feed-row", has_text="9001").count() == 0
    # ... when the connection drops, the client reconnects with ?after=<last id> ...
    for entry in first:
        entry["page"].close(code=1001, reason="test drop")
        entry["server"].close()
    expect(page.locator("#live-feed .feed-row", has_text="9001")).to_have_count(1)
    reconnects = sockets[len(first) :]
    assert reconnects and all(f"after={last_id}" in entry["url"] for entry in reconnects)
    # ... the replayed row shows when the event was published, not when it was replayed ...
    stamp = page.locator("#live-feed .feed-row", has_text="9001").locator("time").get_attribute("datetime")
    assert abs((datetime.fromisoformat(stamp.replace("Z", "+00:00")) - published).total_seconds()) < 1.0, stamp
    # ... and nothing is shown twice.
    expect(seen).to_have_count(1)
    expect(page.locator("#ws-status")).to_have_attribute("data-status", "open")


@pytest.mark.browser
def test_a_user_without_a_role_gets_no_stream_and_the_page_says_so(page, aria_server):
    """Signed in with no scope: the event feed is a 403 page, and on the Control Room the socket is
    refused (4403), the pill says "no access" and nothing keeps reconnecting (before: a silent retry
    loop; before that, the whole plant stream)."""
    aria_server.create_user("noah", "no-role-pass-1")
    sockets: list = []
    page.on("websocket", lambda ws: sockets.append(ws))
    page.goto("/login/?next=/")
    page.fill("#id_username", "noah")
    page.fill("#id_password", "no-role-pass-1")
    page.click("#login-submit")
    expect(page.locator("#ws-status")).to_have_attribute("data-status", "forbidden")
    expect(page.locator("#ws-status")).to_have_text("no access")
    page.wait_for_timeout(1_000)  # every panel's socket (drawer, badge, page) has been refused
    refused = len(sockets)
    page.wait_for_timeout(3_000)  # a reconnect would be due within ~1 s
    assert len(sockets) == refused, "refused sockets kept reconnecting"
    assert page.goto("/events/").status == 403
    expect(page.locator("nav.nav")).not_to_contain_text("Events")
