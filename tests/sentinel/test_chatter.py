"""Chattering: a signal crossing its limit again and again keeps one alarm, not one per crossing."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.models import AuditRecord
from sentinel.choices import AlarmState
from sentinel.models import Alarm
from sentinel.services import samples_ingest, sentinel_scan
from sentinel.services.chatter import CHATTER_CLEAR_DELAY_SECONDS, CHATTER_RAISES
from tests.sentinel.factories import make_cell, make_signal, set_latest

pytestmark = pytest.mark.django_db


def _sample(signal, value, at):
    samples_ingest(samples=[{"signal_id": signal.pk, "time": at.isoformat(), "value": value}], now=at)


def test_a_chattering_signal_keeps_one_alarm_until_it_stays_clear(vibration):
    # Given a vibration toggling across its 4.5 limit every 6 s for ~100 s (the QA run: 8 alarms)...
    t0 = timezone.now() - timedelta(minutes=10)
    for i in range(17):
        _sample(vibration, 5.0 if i % 2 == 0 else 4.0, t0 + timedelta(seconds=6 * i))
    # Then only the first CHATTER_RAISES crossings raise; the last alarm is held open as chattering.
    alarms = list(Alarm.objects.order_by("pk"))
    assert len(alarms) == CHATTER_RAISES
    held = alarms[-1]
    assert [a.state for a in alarms[:-1]] == [AlarmState.CLEARED] * (CHATTER_RAISES - 1)
    assert held.state == AlarmState.ACTIVE_UNACK and held.chattering
    chatter = held.events.get(details__chattering=True, to_state=AlarmState.ACTIVE_UNACK, from_state="active_unack")
    assert chatter.details["raises_in_window"] == CHATTER_RAISES
    assert chatter.details["clear_delay_seconds"] == CHATTER_CLEAR_DELAY_SECONDS
    assert AuditRecord.objects.filter(action="alarm.chatter", target_id=str(held.pk)).count() == 1

    # When the value stays clear, the alarm clears only after the clear-delay...
    start = t0 + timedelta(seconds=6 * 16 + 1)  # the last sample above was a breaching one
    for seconds in range(0, CHATTER_CLEAR_DELAY_SECONDS, 5):
        _sample(vibration, 4.0, start + timedelta(seconds=seconds))
        held.refresh_from_db()
        assert held.state == AlarmState.ACTIVE_UNACK, seconds
    set_latest(vibration, 4.0, time=start + timedelta(seconds=CHATTER_CLEAR_DELAY_SECONDS))
    summary = sentinel_scan(now=start + timedelta(seconds=CHATTER_CLEAR_DELAY_SECONDS))
    held.refresh_from_db()
    assert held.state == AlarmState.CLEARED and summary.evaluation.cleared == [held.pk]
    assert held.events.last().details == {"value": 4.0, "acknowledged": False, "chattering": True}
    assert Alarm.objects.count() == CHATTER_RAISES


def test_a_crossing_back_restarts_the_clear_delay(vibration):
    t0 = timezone.now() - timedelta(minutes=10)
    for i in range(2 * CHATTER_RAISES):  # raise, clear, ... the last clear is held
        _sample(vibration, 5.0 if i % 2 == 0 else 4.0, t0 + timedelta(seconds=5 * i))
    held = Alarm.objects.get(chattering=True)
    t = t0 + timedelta(seconds=5 * (2 * CHATTER_RAISES - 1))
    assert held.clear_since == t
    _sample(vibration, 5.0, t + timedelta(seconds=40))  # back over the limit: same alarm, clock reset
    held.refresh_from_db()
    assert (held.state, held.clear_since) == (AlarmState.ACTIVE_UNACK, None)
    _sample(vibration, 4.0, t + timedelta(seconds=50))
    _sample(vibration, 4.0, t + timedelta(seconds=50 + CHATTER_CLEAR_DELAY_SECONDS - 1))
    held.refresh_from_db()
    assert held.state == AlarmState.ACTIVE_UNACK  # 59 s clear since the reset is not enough
    _sample(vibration, 4.0, t + timedelta(seconds=50 + CHATTER_CLEAR_DELAY_SECONDS))
    held.refresh_from_db()
    assert held.state == AlarmState.CLEARED
    assert Alarm.objects.count() == CHATTER_RAISES


def test_alarms_further_apart_than_the_window_are_not_chattering(vibration):
    t0 = timezone.now() - timedelta(minutes=30)
    for i in range(2 * CHATTER_RAISES + 2):
        _sample(vibration, 5.0 if i % 2 == 0 else 4.0, t0 + timedelta(seconds=25 * i))
    assert Alarm.objects.filter(chattering=True).count() == 0
    assert Alarm.objects.filter(state=AlarmState.CLEARED).count() == CHATTER_RAISES + 1


def _chattering_plant(n_signals: int, now):
    """n signals, each with CHATTER_RAISES alarms in the last minute and the last one open."""
    signals = []
    for i in range(n_signals):
        signal = make_signal(make_cell(), f"c{i}")
        for k in range(CHATTER_RAISES):
            Alarm.objects.create(
                signal=signal,
                state=AlarmState.ACTIVE_UNACK if k == CHATTER_RAISES - 1 else AlarmState.CLEARED,
                severity="alert",
                direction="high",
                threshold_field="alert",
                threshold_value=4.5,
                value=5.0,
                peak_value=5.0,
                raised_at=now - timedelta(seconds=10 * (k + 1)),
            )
        set_latest(signal, 4.0, time=now)
        signals.append(signal)
    return signals


def test_chatter_detection_costs_a_constant_number_of_queries(db):
    now = timezone.now()
    _chattering_plant(2, now)
    with CaptureQueriesContext(connection) as small:
        summary = sentinel_scan(now=now)
    assert len(summary.evaluation.chatter_held) == 2
    Alarm.objects.all().delete()
    _chattering_plant(8, now)
    with CaptureQueriesContext(connection) as large:
        summary = sentinel_scan(now=now)
    assert len(summary.evaluation.chatter_held) == 8 + 2 - 2  # the first plant's signals have no alarm now

    # Only the audit trail grows with N: one INSERT per record (unsealed: no lock, no savepoint).
    def without_audit(ctx) -> int:
        return len(ctx.captured_queries) - sum(
            q["sql"].startswith('INSERT INTO "core_auditrecord"') for q in ctx.captured_queries
        )

    assert without_audit(large) == without_audit(small)
