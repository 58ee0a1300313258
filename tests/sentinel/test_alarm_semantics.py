"""Alarm semantics that must neither hide nor multiply alarms (issue 10, item 6).

- A stale signal suppresses only its own alarm: a fresh trip on the same machine always raises.
- On-delay is time: a breach that lasted `on_delay_seconds` raises, with or without newer samples.
- Chattering counts transitions whichever side: a high-trip ↔ low-alert swing keeps one alarm.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from sentinel.choices import AlarmState
from sentinel.models import Alarm, SignalLatest, StaleCondition
from sentinel.services import samples_ingest, sentinel_scan
from sentinel.services.chatter import CHATTER_RAISES
from sentinel.services.ingest import stale_window
from tests.sentinel.factories import make_cell, make_signal, set_latest
from workorders.models import WorkOrder
from workorders.views import control_room_snapshot

pytestmark = pytest.mark.django_db


def _ingest(signal, value, at):
    return samples_ingest(samples=[{"signal_id": signal.pk, "time": at.isoformat(), "value": value}], now=at)


@pytest.fixture
def pump(db):
    """A centrifugal pump: discharge pressure (trip 10.5 bar) and three siblings."""
    cell = make_cell("P-07")
    return {
        "cell": cell,
        "discharge": make_signal(
            cell, "discharge_pressure_bar", unit="bar", low_alert=3.0, alert=9.0, trip=10.5, deadband=0.1
        ),
        "vibration": make_signal(cell, "vibration_mm_s", alert=4.5, trip=7.1, deadband=0.2),
        "bearing": make_signal(cell, "bearing_temp_c", unit="°C", alert=80.0, trip=95.0, deadband=1.0),
        "flow": make_signal(cell, "flow_m3_h", unit="m³/h", low_alert=20.0, alert=60.0, trip=None, deadband=0.5),
    }


# --- a stale signal hides nothing but its own alarm --------------------------------------------


@pytest.mark.parametrize("path", ["scan", "ingest"])
def test_a_fresh_trip_raises_whatever_the_state_of_its_siblings(pump, path):
    # Given every sibling of the discharge pressure silent for 10 minutes (one of them mid-breach)...
    now = timezone.now()
    dead = now - timedelta(minutes=10)
    set_latest(pump["vibration"], 2.0, time=dead)
    set_latest(pump["bearing"], 85.0, time=dead)
    set_latest(pump["flow"], 40.0, time=dead)
    sentinel_scan(now=now - timedelta(seconds=1))  # the scan has found them stale
    assert set(SignalLatest.objects.filter(stale=True).values_list("signal__key", flat=True)) == {
        "vibration_mm_s",
        "bearing_temp_c",
        "flow_m3_h",
    }
    # When a fresh discharge pressure of 11.6 bar (trip 10.5) arrives...
    if path == "ingest":
        result = _ingest(pump["discharge"], 11.6, now)
        raised = result.evaluation.raised
    else:
        set_latest(pump["discharge"], 11.6, time=now)
        raised = sentinel_scan(now=now).evaluation.raised
    # Then it raises its trip alarm and opens a work order; the stale siblings raise nothing new.
    alarm = Alarm.objects.get(signal=pump["discharge"])
    assert raised == [alarm.pk]
    assert (alarm.severity, alarm.direction, alarm.threshold_value, alarm.value) == ("trip", "high", 10.5, 11.6)
    assert WorkOrder.objects.filter(triggered_by_alarm=alarm, priority="critical").count() == 1


def test_a_stale_signal_keeps_its_own_alarm_as_it_was_and_shows_it(pump, client, operator):
    # Given the vibration alarm open at 5.0 mm/s...
    t0 = timezone.now() - timedelta(minutes=10)
    _ingest(pump["vibration"], 5.0, t0)
    alarm = Alarm.objects.get()
    # ...when the transmitter dies after one last in-band reading the scan never evaluated
    # (written behind the detector's back, e.g. by a restore), the scan marks it stale...
    SignalLatest.objects.filter(signal=pump["vibration"]).update(value=3.0, time=t0 + timedelta(seconds=1))
    summary = sentinel_scan(now=t0 + timedelta(minutes=5))
    # Then the alarm neither clears nor changes on a value that is not fresh...
    assert summary.evaluation.stale_raised == 1 and summary.evaluation.cleared == []
    alarm.refresh_from_db()
    assert alarm.state == AlarmState.ACTIVE_UNACK
    assert StaleCondition.objects.filter(signal=pump["vibration"], cleared_at__isnull=True).exists()
    # ...and the operator sees the stale condition on the alarm and on the signal.
    client.force_login(operator)
    body = client.get(f"/api/v1/alarms/{alarm.pk}").json()
    assert body["signal_stale"] is True
    assert body["signal_time"] is not None
    listed = {a["id"]: a for a in client.get("/api/v1/alarms?state=open").json()}
    assert listed[alarm.pk]["signal_stale"] is True
    cell = next(c for c in client.get("/api/v1/cells").json() if c["tag"] == "P-07")
    assert {s["key"]: s["stale"] for s in cell["signals"]}["vibration_mm_s"] is True
    # ...and the Control Room's alarm row says so too.
    rows = {row["id"]: row for row in control_room_snapshot()["alarms"]}
    assert rows[alarm.pk]["signal_stale"] is True
    # When samples return in band, the stale condition ends and the alarm clears on the fresh value.
    back = t0 + timedelta(minutes=5, seconds=5)
    _ingest(pump["vibration"], 3.0, back)
    alarm.refresh_from_db()
    assert alarm.state == AlarmState.CLEARED
    assert client.get(f"/api/v1/alarms/{alarm.pk}").json()["signal_stale"] is False


# --- on-delay is time ----------------------------------------------------------------------------


def test_a_breach_that_goes_silent_alarms_once_its_on_delay_has_run(pump):
    bearing = pump["bearing"]
    bearing.on_delay_seconds = 30
    bearing.save(update_fields=["on_delay_seconds"])
    t0 = timezone.now() - timedelta(minutes=5)
    # Given one breaching sample, then silence...
    assert _ingest(bearing, 88.0, t0).evaluation.pending == 1
    assert SignalLatest.objects.get(signal=bearing).breach_since == t0
    # ...the breach is pending until it has lasted the on-delay (the silent signal goes stale
    # meanwhile: 3 scan intervals are less than 29 s)...
    assert stale_window() < timedelta(seconds=29)
    early = sentinel_scan(now=t0 + timedelta(seconds=29))
    assert early.evaluation.raised == [] and early.evaluation.stale_raised == 1
    assert not Alarm.objects.exists()
    # ...then the scan raises it, as of the moment the on-delay ran out, with no newer sample.
    summary = sentinel_scan(now=t0 + timedelta(seconds=31))
    alarm = Alarm.objects.get()
    assert summary.evaluation.raised == [alarm.pk]
    assert (alarm.value, alarm.raised_at, alarm.state) == (88.0, t0 + timedelta(seconds=30), AlarmState.ACTIVE_UNACK)
    # The signal stays shown as stale; its alarm stands (no fresh value to clear it on).
    assert SignalLatest.objects.get(signal=bearing).stale
    assert StaleCondition.objects.filter(signal=bearing, cleared_at__isnull=True).count() == 1
    assert sentinel_scan(now=t0 + timedelta(seconds=60)).evaluation.raised == []
    assert Alarm.objects.get().state == AlarmState.ACTIVE_UNACK


def test_a_spike_shorter_than_the_on_delay_never_alarms_even_when_scanned_late(pump):
    bearing = pump["bearing"]
    bearing.on_delay_seconds = 30
    bearing.save(update_fields=["on_delay_seconds"])
    t0 = timezone.now() - timedelta(minutes=5)
    _ingest(bearing, 88.0, t0)
    _ingest(bearing, 70.0, t0 + timedelta(seconds=10))  # back in band before the on-delay ran
    assert sentinel_scan(now=t0 + timedelta(seconds=60)).evaluation.raised == []
    assert not Alarm.objects.exists()
    assert SignalLatest.objects.get(signal=bearing).breach_since is None


# --- chattering counts transitions, whichever side --------------------------------------------


def test_a_signal_swinging_between_high_trip_and_low_alert_is_chattering(pump):
    discharge = pump["discharge"]
    t0 = timezone.now() - timedelta(minutes=10)
    # Given 2 minutes of a discharge pressure swinging 11.2 bar (trip) ↔ 2.4 bar (low alert) every 4 s
    # (the QA run: 29 alarms and never marked chattering)...
    for i in range(30):
        _ingest(discharge, 11.2 if i % 2 == 0 else 2.4, t0 + timedelta(seconds=4 * i))
    # Then the swings count as transitions: after CHATTER_RAISES alarms one stays open, chattering...
    alarms = list(Alarm.objects.filter(signal=discharge).order_by("pk"))
    assert len(alarms) == CHATTER_RAISES
    held = alarms[-1]
    assert held.chattering and held.state == AlarmState.ACTIVE_UNACK
    assert [a.state for a in alarms[:-1]] == [AlarmState.CLEARED] * (CHATTER_RAISES - 1)
    assert {a.direction for a in alarms} == {"high", "low"}
    chatter = held.events.get(details__chattering=True, details__swung=True)
    assert chatter.details["raises_in_window"] == CHATTER_RAISES
    # ...and one work order, not one per swing.
    assert WorkOrder.objects.filter(cell=pump["cell"]).count() == 1
    # When the pressure settles inside its band for the clear-delay, the alarm clears.
    end = t0 + timedelta(seconds=4 * 30)
    for seconds in range(0, 65, 5):
        _ingest(discharge, 6.0, end + timedelta(seconds=seconds))
    held.refresh_from_db()
    assert held.state == AlarmState.CLEARED
    assert Alarm.objects.filter(signal=discharge).count() == CHATTER_RAISES


def test_a_single_swing_still_clears_and_raises_the_other_side(pump):
    discharge = pump["discharge"]
    t0 = timezone.now() - timedelta(minutes=10)
    _ingest(discharge, 11.2, t0)
    _ingest(discharge, 2.4, t0 + timedelta(seconds=30))
    states = dict(Alarm.objects.filter(signal=discharge).values_list("direction", "state"))
    assert states == {"high": AlarmState.CLEARED, "low": AlarmState.ACTIVE_UNACK}
    assert not Alarm.objects.filter(chattering=True).exists()


def test_a_replayed_history_clears_its_alarm_when_its_values_did(pump):
    # Given a vibration breach and its return to normal, back-filled from an hour ago...
    vibration = pump["vibration"]
    start = timezone.now() - timedelta(hours=1)
    _ingest(vibration, 5.0, start)
    _ingest(vibration, 2.0, start + timedelta(minutes=3))
    # Then the alarm's duration is the three minutes the history shows, not "until the replay ran".
    alarm = Alarm.objects.get(signal=vibration)
    assert alarm.state == AlarmState.CLEARED
    assert alarm.cleared_at - alarm.raised_at == timedelta(minutes=3)


def test_a_signal_its_source_declared_dead_stays_stale_until_a_newer_sample(pump):
    # Given a fresh vibration value, then the source's death certificate (Sparkplug NDEATH)...
    from sentinel.connectors.services import signals_mark_stale

    vibration = pump["vibration"]
    now = timezone.now()
    _ingest(vibration, 2.0, now - timedelta(seconds=2))
    signals_mark_stale(signal_ids=[vibration.pk], now=now)
    # When the scan runs while that last value is still recent...
    sentinel_scan(now=now + timedelta(seconds=1))
    # Then the signal stays stale: a recent value from before the death does not revive it.
    assert SignalLatest.objects.get(signal=vibration).stale is True
    assert StaleCondition.objects.filter(signal=vibration, cleared_at__isnull=True).exists()
    # ...until the source sends a sample after the death.
    _ingest(vibration, 2.1, now + timedelta(seconds=3))
    sentinel_scan(now=now + timedelta(seconds=4))
    assert SignalLatest.objects.get(signal=vibration).stale is False
