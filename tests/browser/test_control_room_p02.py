"""The maintenance Control Room end to end: the P-02 bearing scenario seen live in the browser.

The real system runs as `manage.py runaria` (daphne + the embedded Celery worker and beat, fake
engine) on a seeded file SQLite database. The test ingests P-02's vibration ramp through the API
(as the simulator's p02-bearing scenario does) and watches, without reloading: the alert banner,
the alarm, the trend chart, the agents at work, and the work order reaching `open` with an RCA
citing the past bearing failure. It takes the README's screenshot.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.live_server import ROOT, LiveServer, embedded_env, free_port

SCREENSHOT = ROOT / "docs" / "screenshots" / "control-room.png"
PASSWORD = "p02-control-room-1"

# Seeded demo data when seed_demo provides it; else the workorders test builders (same P-02 story).
SETUP = f"""
import itertools
import json
from datetime import timedelta
from django.contrib.auth.models import Group, User
from django.db.models import F
from django.utils import timezone
from core.models import ApiToken
from sentinel.models import Cell, SignalDefinition, SignalLatest, SignalSample
from workorders.models import FailureHistory
from tests.workorders import factories as f

cell = Cell.objects.filter(tag="P-02").first() or f.make_cell("P-02")
vib = SignalDefinition.objects.filter(cell=cell, key__startswith="vibration").first() or f.make_signal(cell)
if not SignalDefinition.objects.filter(cell=cell, key="bearing_temp_c").exists():
    f.make_signal(cell, "bearing_temp_c", display_name="Bearing temperature", unit="°C", alert=80.0, trip=95.0)
if not hasattr(cell, "kb"):
    f.make_kb(cell)
if not FailureHistory.objects.filter(cell=cell, failure_mode="bearing_wear").exists():
    f.make_history(cell)
bearing = FailureHistory.objects.filter(cell=cell, failure_mode="bearing_wear").order_by("-failure_time").first()
# The test's ramp is the live feed of the last 30 minutes: the seeded history (which ends at seeding
# time) makes way for it, so two sources never interleave on one signal.
SignalSample.objects.filter(signal=vib, time__gte=timezone.now() - timedelta(minutes=31)).delete()
# Earlier, closed orders on another cell: the page lists them collapsed, after the active ones.
other = Cell.objects.exclude(pk=cell.pk).filter(onboarding_complete=True).order_by("tag").first() or f.make_cell("C-01")
closed = [
    f.make_work_order(other, status="completed", title="Replace inlet filter", priority="low",
                      rca_summary="filter_clogging: pressure drop across the inlet filter",
                      recommended_actions=["Isolate", "Replace the filter element", "Leak test"]),
    f.make_work_order(other, status="cancelled", title="False alarm: sensor cable loose", priority="medium",
                      rca_summary="sensor_fault: loose connector at the vibration sensor"),
]
# A commissioning cell sentinel never scans, seeded hours ago and not fed since.
press = Cell.objects.filter(onboarding_complete=False).order_by("tag").first()
if press is None:
    press = f.make_cell("PR-05")
    Cell.objects.filter(pk=press.pk).update(onboarding_complete=False)
    f.ramp(f.make_signal(press, "hydraulic_pressure_bar", display_name="Hydraulic pressure", unit="bar",
                         alert=210.0, trip=None, low_alert=150.0), start=180.0, peak=181.0)
hours_ago = timedelta(hours=3)
SignalSample.objects.filter(signal__cell=press).update(time=F("time") - hours_ago)
SignalLatest.objects.filter(signal__cell=press).update(time=F("time") - hours_ago)
user = User.objects.create_user("cora", password={PASSWORD!r})
user.groups.add(Group.objects.get_or_create(name="operator")[0])
raw = ApiToken.generate_key()
ApiToken.objects.create(user=user, name="p02 test", key_prefix=raw[:12], key_hash=ApiToken.hash_key(raw))
print("SETUP " + json.dumps({{"token": raw, "cell_id": cell.pk, "signal_id": vib.pk,
    "alert": vib.alert, "bearing_date": bearing.failure_time.date().isoformat(),
    "closed_ids": [w.pk for w in closed], "press_id": press.pk}}))
"""


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict]]:
    var_dir = tmp_path_factory.mktemp("aria-p02")
    env = embedded_env(var_dir, {"ARIA_ENGINE": "fake", "ARIA_EVENTS_TAIL_SECONDS": "1"})
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True, timeout=300)
    subprocess.run([*manage, "seed_demo"], cwd=ROOT, env=env, check=True, timeout=300, capture_output=True)
    out = subprocess.run(
        [*manage, "shell", "-c", SETUP], cwd=ROOT, env=env, check=True, timeout=120, capture_output=True, text=True
    ).stdout
    setup = json.loads(next(line for line in out.splitlines() if line.startswith("SETUP "))[6:])

    port = free_port()
    log_path = var_dir / "runaria.log"
    process = subprocess.Popen(
        [*manage, "runaria", "--port", str(port), "--no-simulator"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=log_path.open("w"),
        stderr=subprocess.STDOUT,
        text=True,
    )
    server = LiveServer(url=f"http://127.0.0.1:{port}", env=env, process=process, log_path=log_path)
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None or time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"runaria did not come up:\n{server.log()}")
        try:
            if httpx.get(server.url + "/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    yield server, setup
    server.stop()


def p02_ramp(signal_id: int, *, minutes: int = 30, peak: float = 5.0, breach_min: int = 14) -> list[dict]:
    """One sample every 30 s ending now: ~2.1 mm/s, rising, then ~`peak` held for `breach_min` minutes."""
    now = datetime.now(UTC)
    samples = []
    count = minutes * 2
    for i in range(count):
        left_min = (count - 1 - i) / 2
        rise = min(1.0, max(0.0, (i - count / 3) / (count / 3)))
        value = peak if left_min < breach_min else 2.1 + (peak - 2.1) * rise
        # A transmitter's measurement noise (a value held exactly for minutes reads as a flatline).
        value += 0.06 * math.sin(i * 2.3) + 0.03 * math.sin(i * 5.1)
        t = now - timedelta(seconds=30 * (count - 1 - i))
        samples.append({"signal_id": signal_id, "time": t.isoformat(), "value": round(value, 3)})
    return samples


@pytest.mark.browser
def test_p02_bearing_scenario_live_in_the_control_room(browser, system) -> None:
    server, setup = system
    context = browser.new_context(base_url=server.url, viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # Given the operator in the Control Room, connected to the event bus, with P-02's trend drawn.
    page.goto("/login/")
    page.fill("#id_username", "cora")
    page.fill("#id_password", PASSWORD)
    page.click("#login-submit")
    expect(page.locator("#ws-status")).to_have_attribute("data-status", "open")
    p02_trend = page.locator(f'.trend[data-cell-id="{setup["cell_id"]}"]')
    expect(p02_trend.locator("svg.trend-svg")).to_have_count(1)

    # When P-02's vibration ramps to 5.0 mm/s (alert limit 4.5), ingested through the API.
    response = httpx.post(
        f"{server.url}/api/v1/signals/samples",
        json={"samples": p02_ramp(setup["signal_id"])},
        headers={"Authorization": f"Bearer {setup['token']}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text

    # Then the banner appears, coloured by severity, saying which way the value is off.
    banner = page.locator(f'#cr-banners .cr-banner[data-cell-id="{setup["cell_id"]}"]')
    expect(banner).to_be_visible()
    expect(banner).to_have_attribute("data-severity", "alert")
    expect(banner).to_contain_text("TOO HIGH")
    expect(banner).to_contain_text("P-02")

    # ... the alarm is listed with its actions, and the trend is a line chart with threshold lines.
    alarm = page.locator("#alarm-list .cr-alarm").first
    expect(alarm).to_have_attribute("data-state", "active_unack")
    expect(alarm.locator(".btn-ack")).to_be_visible()
    expect(p02_trend).to_have_attribute("data-signal-id", str(setup["signal_id"]))
    expect(p02_trend.locator("path.trend-line")).to_have_count(1)
    expect(p02_trend.locator('line[data-threshold="alert"]')).to_have_count(1)
    expect(p02_trend.locator('line[data-threshold="trip"]')).to_have_count(1)

    # ... and the work order moves detected → analyzed → open, with an RCA citing the past bearing failure.
    order = page.locator("#work-order-list .wo").first
    expect(order).to_have_attribute("data-status", "open", timeout=90_000)
    expect(order.locator(".wo-rca")).to_contain_text("bearing")
    expect(order.locator(".wo-rca")).to_contain_text(setup["bearing_date"])
    expect(order.locator(".wo-steps li.done")).to_have_count(2)
    expect(order.locator(".wo-actions li").first).to_be_visible()

    # The agents' work showed up live: tool calls with durations, collapsible thinking, the handoff.
    feed = page.locator("#activity-feed")
    expect(feed.locator(".act-tool[data-duration-ms]").first).to_be_visible()
    expect(feed.locator("details.act-thinking").first).to_be_attached()
    expect(feed.locator(".act-handoff").first).to_contain_text("kb_builder")
    expect(feed.locator(".act-ready").first).to_contain_text("is open")

    # Active orders come first; the earlier closed ones follow, each one summary line, collapsed.
    cards = page.locator("#work-order-list .wo")
    statuses = [c.get_attribute("data-status") for c in cards.all()]
    assert statuses[0] == "open" and statuses[-2:] == ["cancelled", "completed"], statuses
    closed = page.locator("#work-order-list details.wo-closed")
    expect(closed).to_have_count(2)
    for card in closed.all():
        expect(card.locator("summary.wo-summary")).to_be_visible()
        expect(card.locator(".wo-steps")).to_be_hidden()
        assert card.get_attribute("open") is None

    # The y axis ticks are round numbers, evenly spaced; the threshold lines keep their exact values.
    ticks = [float(t.get_attribute("data-value")) for t in p02_trend.locator(".trend-tick").all()]
    steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
    assert len(ticks) >= 3 and len(steps) == 1, ticks
    step = steps.pop()
    assert any(abs(step - m * 10**k) < 1e-9 for m in (1, 2, 2.5, 5) for k in range(-3, 4)), ticks
    assert all(abs(t / step - round(t / step)) < 1e-9 for t in ticks), ticks
    expect(p02_trend.locator(".trend-label.thr-alert")).to_have_text("alert 4.5")
    expect(p02_trend.locator(".trend-label.thr-trip")).to_have_text("trip 7.1")

    # The commissioning press is not onboarded and its last sample is hours old: its trend says so.
    press = page.locator(f'.trend[data-cell-id="{setup["press_id"]}"]')
    expect(press.locator(".flag-onboarding")).to_have_text("not onboarded")
    expect(press.locator(".flag-stale")).to_contain_text("stale")
    expect(press.locator(".flag-stale")).to_contain_text("3 h ago")
    expect(p02_trend.locator(".flag-onboarding")).to_have_count(0)

    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)

    # A limit change (4.5 -> 4.8, still below the value) while the alarm is open: the banner names
    # the limit in force now, as the alarm row does (it kept the raise-time 4.50 before).
    expect(banner.locator(".cr-banner-value")).to_contain_text("(limit 4.50)")
    server.manage(
        "shell", "-c",
        "from django.contrib.auth.models import User\n"
        "from sentinel.services.limits import signal_limits_change\n"
        f"signal_limits_change(signal={setup['signal_id']}, changes={{'alert': 4.8}}, reason='new bearing runs warmer',"
        " actor=User.objects.get(username='cora'))\n",
    )  # fmt: skip
    expect(alarm.locator(".cr-alarm-detail")).to_contain_text("limit 4.80 (was 4.50 when raised)", timeout=15_000)
    expect(banner.locator(".cr-banner-value")).to_contain_text("(limit 4.80)")
    expect(banner.locator(".cr-banner-value")).not_to_contain_text("4.50")

    # A collapsed card opens to its details.
    first_closed = closed.first
    first_closed.locator("summary").click()
    expect(first_closed.locator(".wo-rca")).to_be_visible()

    # Acknowledging goes through the sentinel API (session + CSRF) and the list updates in place.
    alarm.locator(".btn-ack").click()
    expect(page.locator("#alarm-list .cr-alarm").first).to_have_attribute("data-state", "acknowledged")
    expect(page.locator("#alarm-error")).to_be_hidden()
    # Shelving needs a reason (ISA-18.2): a blank comment is refused on the page, the alarm stays put.
    page.locator("#alarm-list .cr-alarm .btn-shelve").first.click()
    expect(page.locator("#alarm-error")).to_be_visible()
    expect(page.locator("#alarm-error")).to_contain_text("reason")
    expect(page.locator("#alarm-list .cr-alarm").first).to_have_attribute("data-state", "acknowledged")
    page.locator("#alarm-list .cr-alarm .cr-alarm-comment").first.fill("crew on the way")
    page.locator("#alarm-list .cr-alarm .btn-shelve").first.click()
    expect(page.locator("#alarm-list .cr-alarm").first).to_have_attribute("data-state", "shelved")
    expect(page.locator("#alarm-error")).to_be_hidden()

    # Alarm changes made elsewhere (alarm_changed) reach the page without a reload:
    # unshelved through the API, then cleared when the vibration is back to normal.
    auth = {"Authorization": f"Bearer {setup['token']}"}
    alarm_id = page.locator("#alarm-list .cr-alarm").first.get_attribute("data-alarm-id")
    assert httpx.post(f"{server.url}/api/v1/alarms/{alarm_id}/unshelve", json={}, headers=auth).status_code == 200
    expect(page.locator("#alarm-list .cr-alarm").first).to_have_attribute("data-state", "acknowledged", timeout=15_000)
    normal = [{"signal_id": setup["signal_id"], "time": datetime.now(UTC).isoformat(), "value": 2.0}]
    assert httpx.post(f"{server.url}/api/v1/signals/samples", json={"samples": normal}, headers=auth).status_code == 200
    expect(page.locator("#alarm-list .cr-alarm")).to_have_count(0, timeout=15_000)

    # After a reload the feed replays what happened before: those rows do not claim the reload time.
    page.reload()
    replayed = page.locator("#activity-feed .act[data-replayed]")
    expect(replayed.first).to_be_attached()
    for stamp in replayed.locator(".act-time").all():
        assert stamp.inner_text() == "earlier" or stamp.get_attribute("datetime"), stamp.inner_text()

    assert not [e for e in errors if "Content Security Policy" in e or "Error" in e], errors
    context.close()


@pytest.mark.browser
def test_control_room_needs_the_operator_or_approver_scope(browser, system) -> None:
    server, _ = system
    server.create_user("abe", PASSWORD)  # signed in, but neither operator nor approver
    server.create_user("ava", PASSWORD, "approver")
    context = browser.new_context(base_url=server.url)
    page = context.new_page()
    page.goto("/login/")
    page.fill("#id_username", "abe")
    page.fill("#id_password", PASSWORD)
    page.click("#login-submit")

    expect(page.locator("#cr-scope-notice")).to_contain_text("operator")
    expect(page.locator("#alarm-list .cr-alarm")).to_have_count(0, timeout=15_000)
    expect(page.locator(".trend")).to_have_count(0)
    assert page.request.get(f"{server.url}/control-room/state").status == 403
    context.close()

    # An approver (a supervisor) watches the plant but gets no alarm actions.
    context = browser.new_context(base_url=server.url)
    page = context.new_page()
    page.goto("/login/")
    page.fill("#id_username", "ava")
    page.fill("#id_password", PASSWORD)
    page.click("#login-submit")
    expect(page.locator(".trend").first).to_be_visible(timeout=15_000)
    expect(page.locator("#cr-scope-notice")).to_have_count(0)
    expect(page.locator("#alarm-list .btn-ack")).to_have_count(0)
    state = page.request.get(f"{server.url}/control-room/state")
    assert state.status == 200 and state.json()["can_operate"] is False
    context.close()
