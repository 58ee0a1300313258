from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from sentinel.choices import AlarmState
from sentinel.models import Alarm, SignalLatest, StaleCondition
from sentinel.services import samples_ingest, sentinel_scan
from sentinel.signals import alarm_raised
from sentinel.tasks import scan_task
from tests.sentinel.factories import make_cell, make_signal, set_latest
from workorders.models import WorkOrder

pytestmark = pytest.mark.django_db


def _plant(n_signals: int, n_breaching: int):
    """n healthy-or-breaching signals spread over cells of 5 signals each."""
    now = timezone.now()
    cell = None
    for i in range(n_signals):
        if i % 5 == 0:
            cell = make_cell()
        signal = make_signal(cell, f"s{i}")
        set_latest(signal, 5.0 if i < n_breaching else 2.0, time=now)


def _scan_queries() -> int:
    with CaptureQueriesContext(connection) as ctx:
        sentinel_scan()
    return len(ctx.captured_queries)


def test_scan_raises_one_alarm_per_breaching_signal(vibration):
    set_latest(vibration, 5.0)
    summary = sentinel_scan()
    alarm = Alarm.objects.get()
    assert summary.evaluation.raised == [alarm.pk]
    assert (alarm.state, alarm.severity, alarm.direction, alarm.threshold_field) == (
        "active_unack",
        "alert",
        "high",
        "alert",
    )
    # A second scan finds the alarm already open and raises nothing.
    assert sentinel_scan().evaluation.raised == []
    assert Alarm.objects.count() == 1


def test_scan_query_count_is_constant_in_the_number_of_signals(db):
    # Given 10 signals with 2 breaching: the first scan raises 2 alarms, the second is steady state.
    _plant(10, 2)
    first_small = _scan_queries()
    steady_small = _scan_queries()
    # When the plant grows to 60 signals with the same 2 new breaches (on fresh signals: their old
    # alarms and the work orders workorders' receiver opened for them are gone, so the receiver
    # does the same work for the new alarms as it did the first time)...
    WorkOrder.objects.all().delete()
    Alarm.objects.all().delete()
    _plant(50, 2)
    SignalLatest.objects.update(value=2.0, breach_since=None)
    SignalLatest.objects.filter(
        signal_id__in=SignalLatest.objects.order_by("signal_id").values("signal_id")[:2]
    ).update(value=5.0)
    first_large = _scan_queries()
    steady_large = _scan_queries()
    # Then the number of queries does not grow with N.
    assert first_small == first_large
    assert steady_small == steady_large
    assert steady_large <= 8  # unshelve check, rows, open alarms, peaks + savepoints


def test_on_delay_holds_the_breach_until_it_persists(cell):
    signal = make_signal(cell, "bearing_temp_c", alert=80.0, trip=None, on_delay_seconds=30)
    t0 = timezone.now() - timedelta(seconds=40)

    def sample(seconds: int, value: float) -> None:  # each sample arrives as it is measured
        at = t0 + timedelta(seconds=seconds)
        samples_ingest(samples=[{"signal_id": signal.pk, "time": at.isoformat(), "value": value}], now=at)

    sample(0, 85.0)
    assert not Alarm.objects.exists()
    assert SignalLatest.objects.get(signal=signal).breach_since == t0
    # A spike that goes away resets the on-delay.
    sample(10, 70)
    assert SignalLatest.objects.get(signal=signal).breach_since is None
    sample(15, 85)
    sample(30, 86)
    assert not Alarm.objects.exists()
    sample(45, 86)
    assert Alarm.objects.get().value == 86


def test_escalation_alert_to_trip_updates_the_alarm_and_sends_the_signal(vibration):
    received = []

    def on_escalated(sender, alarm, previous_severity, **kwargs):
        received.append((alarm.pk, alarm.severity, previous_severity))

    from sentinel.signals import alarm_escalated

    alarm_escalated.connect(on_escalated)
    try:
        set_latest(vibration, 5.0)
        sentinel_scan()
        set_latest(vibration, 7.5)
        sentinel_scan()
    finally:
        alarm_escalated.disconnect(on_escalated)
    alarm = Alarm.objects.get()
    assert (alarm.severity, alarm.threshold_field, alarm.threshold_value, alarm.value) == ("trip", "trip", 7.1, 7.5)
    assert received == [(alarm.pk, "trip", "alert")]
    assert list(alarm.events.values_list("to_state", flat=True)) == ["active_unack", "active_unack"]
    assert alarm.events.last().details["escalated_from"] == "alert"


def test_clear_respects_the_deadband(vibration):
    set_latest(vibration, 5.0)
    sentinel_scan()
    set_latest(vibration, 4.4)
    sentinel_scan()
    assert Alarm.objects.get().state == AlarmState.ACTIVE_UNACK
    set_latest(vibration, 4.2)
    assert len(sentinel_scan().evaluation.cleared) == 1
    assert Alarm.objects.get().state == AlarmState.CLEARED
    assert SignalLatest.objects.get(signal=vibration).breach_since is None


def test_peak_value_tracks_the_worst_value(vibration):
    set_latest(vibration, 5.0)
    sentinel_scan()
    set_latest(vibration, 6.0)
    sentinel_scan()
    set_latest(vibration, 5.5)
    sentinel_scan()
    assert Alarm.objects.get().peak_value == 6.0


def test_stale_signal_raises_a_condition_once_and_never_hides_a_siblings_alarm(cell, vibration, pressure):
    old = timezone.now() - timedelta(minutes=5)
    set_latest(pressure, 6.0, time=old)  # silent for far more than 3 intervals
    set_latest(vibration, 5.0)  # fresh and breaching: its alarm does not depend on the pressure
    summary = sentinel_scan()
    assert summary.evaluation.stale_raised == 1
    assert Alarm.objects.get().signal == vibration
    assert StaleCondition.objects.filter(signal=pressure, cleared_at__isnull=True).count() == 1
    assert sentinel_scan().evaluation.stale_raised == 0  # raised once
    # When samples return, the stale condition clears.
    samples_ingest(samples=[{"signal_id": pressure.pk, "time": timezone.now().isoformat(), "value": 6.0}])
    assert StaleCondition.objects.get(signal=pressure).cleared_at is not None
    assert not SignalLatest.objects.get(signal=pressure).stale


def test_disabled_signals_and_cells_not_onboarded_are_not_scanned(db):
    pending_cell = make_cell(onboarded=False)
    set_latest(make_signal(pending_cell, "v"), 9.0)
    set_latest(make_signal(make_cell(), "v", enabled=False), 9.0)
    assert sentinel_scan().evaluation.raised == []


def test_alarm_raised_is_sent_inside_the_transaction(vibration):
    seen = []

    def on_raised(sender, alarm, **kwargs):
        seen.append((sender, alarm.pk, connection.in_atomic_block, alarm.signal.cell.tag))

    alarm_raised.connect(on_raised)
    try:
        set_latest(vibration, 5.0)
        scan_task.delay()
    finally:
        alarm_raised.disconnect(on_raised)
    assert seen == [(Alarm, Alarm.objects.get().pk, True, "P-02")]


def test_signal_jumping_sides_clears_and_raises_the_other_side(pressure):
    set_latest(pressure, 9.5)
    sentinel_scan()
    set_latest(pressure, 2.0)
    sentinel_scan()
    states = dict(Alarm.objects.values_list("direction", "state"))
    assert states == {"high": "cleared", "low": "active_unack"}
