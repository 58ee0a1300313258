from datetime import timedelta

import pytest
from django.utils import timezone

from core.audit import audit_verify
from core.errors import Conflict, InvalidInput
from core.models import AuditRecord
from sentinel.choices import AlarmState
from sentinel.models import Alarm
from sentinel.services import (
    alarm_acknowledge,
    alarm_put_out_of_service,
    alarm_raise,
    alarm_return_to_service,
    alarm_shelve,
    alarm_unshelve,
    alarm_unshelve_for_work_order_closed,
    sentinel_scan,
)
from sentinel.services.alarms import MAX_SHELVE_MINUTES, alarm_unshelve_expired
from sentinel.signals import alarm_raised
from sentinel.thresholds import evaluate_threshold
from tests.sentinel.factories import set_latest

pytestmark = pytest.mark.django_db


@pytest.fixture
def alarm(vibration):
    set_latest(vibration, 5.0)
    return alarm_raise(signal=vibration, breach=evaluate_threshold(vibration, 5.0), value=5.0, time=timezone.now())


def _trail(alarm: Alarm) -> list[tuple[str, str, str]]:
    return [(e.from_state, e.to_state, e.actor.username if e.actor else "") for e in alarm.events.order_by("id")]


def test_raise_writes_an_event_an_audit_record_and_sends_alarm_raised(vibration):
    received = []
    alarm_raised.connect(lambda sender, alarm, **kw: received.append(alarm.pk), dispatch_uid="t-raise", weak=False)
    try:
        alarm = alarm_raise(signal=vibration, breach=evaluate_threshold(vibration, 5.0), value=5.0, time=timezone.now())
    finally:
        alarm_raised.disconnect(dispatch_uid="t-raise")
    assert received == [alarm.pk]
    assert _trail(alarm) == [("", "active_unack", "")]
    record = AuditRecord.objects.get(action="alarm.raise")
    assert (record.target_type, record.target_id, record.actor_label) == ("sentinel.alarm", str(alarm.pk), "system")
    # One open alarm per signal: a second raise is a no-op returning None.
    assert (
        alarm_raise(signal=vibration, breach=evaluate_threshold(vibration, 6.0), value=6.0, time=timezone.now()) is None
    )
    assert Alarm.objects.count() == 1


def test_lifecycle_acknowledge_then_clear_on_return_inside_the_deadband(alarm, vibration, operator):
    alarm_acknowledge(alarm=alarm, actor=operator, comment="seen, checking the bearing")
    alarm.refresh_from_db()
    assert alarm.state == AlarmState.ACKNOWLEDGED
    assert alarm.acknowledged_by == operator and alarm.acknowledge_comment == "seen, checking the bearing"
    set_latest(vibration, 4.35)  # below the limit but inside the 0.2 deadband
    sentinel_scan()
    alarm.refresh_from_db()
    assert alarm.state == AlarmState.ACKNOWLEDGED
    set_latest(vibration, 4.1)
    sentinel_scan()
    alarm.refresh_from_db()
    assert alarm.state == AlarmState.CLEARED and alarm.cleared_at
    assert _trail(alarm) == [
        ("", "active_unack", ""),
        ("active_unack", "acknowledged", "olga"),
        ("acknowledged", "cleared", ""),
    ]
    actions = list(
        AuditRecord.objects.filter(target_type="sentinel.alarm", target_id=str(alarm.pk))
        .values_list("action", flat=True)
        .order_by("id")
    )
    assert actions == ["alarm.raise", "alarm.acknowledge", "alarm.clear"]
    assert audit_verify() is None


def test_illegal_transition_is_a_conflict_listing_the_allowed_states(alarm, operator):
    alarm_acknowledge(alarm=alarm, actor=operator)
    with pytest.raises(Conflict) as exc:
        alarm_acknowledge(alarm=alarm, actor=operator)
    assert exc.value.extra["allowed"] == ["cleared", "out_of_service", "shelved"]
    with pytest.raises(Conflict):
        alarm_unshelve(alarm=alarm, actor=operator)
    with pytest.raises(Conflict):
        alarm_return_to_service(alarm=alarm, actor=operator)


def test_timed_shelve_expires_in_the_scan(alarm, operator):
    alarm_shelve(alarm=alarm, actor=operator, minutes=60, comment="known, crew on the way")
    alarm.refresh_from_db()
    assert alarm.state == AlarmState.SHELVED and alarm.state_before_shelve == AlarmState.ACTIVE_UNACK
    assert alarm.shelved_until > timezone.now() + timedelta(minutes=59)
    # Still breaching and shelved: the scan neither clears nor re-raises it.
    sentinel_scan()
    assert Alarm.objects.get().state == AlarmState.SHELVED
    summary = sentinel_scan(now=timezone.now() + timedelta(minutes=61))
    alarm.refresh_from_db()
    assert summary.unshelved == [alarm.pk]
    assert alarm.state == AlarmState.ACTIVE_UNACK and alarm.shelved_until is None


def test_shelve_needs_exactly_one_of_minutes_or_work_order(alarm, operator):
    with pytest.raises(InvalidInput) as exc:
        alarm_shelve(alarm=alarm, actor=operator, comment="known")
    assert exc.value.field == "minutes"
    with pytest.raises(InvalidInput):
        alarm_shelve(alarm=alarm, actor=operator, minutes=5, until_work_order_closes=True, comment="known")


def test_shelved_until_work_order_closes_unshelves_to_cleared_when_the_value_recovered(alarm, vibration, operator):
    alarm_acknowledge(alarm=alarm, actor=operator)
    alarm_shelve(alarm=alarm, actor=operator, until_work_order_closes=True, comment="WO open")
    set_latest(vibration, 2.0)
    sentinel_scan()  # shelved alarms are decided when they come back, not by the scan
    assert Alarm.objects.get().state == AlarmState.SHELVED
    result = alarm_unshelve_for_work_order_closed(alarm=alarm.pk, work_order_id=7)
    assert result.state == AlarmState.CLEARED
    assert alarm.events.last().comment == "work order #7 closed"
    # Not shelved for a work order: the hook is a no-op.
    assert alarm_unshelve_for_work_order_closed(alarm=alarm.pk) is None


def test_a_shelve_until_a_work_order_closes_still_ends_at_the_longest_shelve(alarm, operator):
    """Red team: shelved "until the work order closes" with no open order (or a closed one), the
    alarm stayed hidden for ever. It now also runs out at MAX_SHELVE_MINUTES, like a timed shelve."""
    alarm_acknowledge(alarm=alarm, actor=operator)
    shelved = alarm_shelve(alarm=alarm, actor=operator, until_work_order_closes=True, comment="WO open")
    assert shelved.shelved_until is not None
    assert shelved.shelved_until - timezone.now() <= timedelta(minutes=MAX_SHELVE_MINUTES)
    assert alarm_unshelve_expired(now=shelved.shelved_until - timedelta(seconds=1)) == []
    back = alarm_unshelve_expired(now=shelved.shelved_until + timedelta(seconds=1))
    assert [a.pk for a in back] == [alarm.pk]
    assert Alarm.objects.get(pk=alarm.pk).state != AlarmState.SHELVED


def test_unshelve_restores_the_state_before_when_still_breaching(alarm, operator):
    alarm_acknowledge(alarm=alarm, actor=operator)
    alarm_shelve(alarm=alarm, actor=operator, minutes=5, comment="known")
    assert alarm_unshelve(alarm=alarm, actor=operator).state == AlarmState.ACKNOWLEDGED


def test_out_of_service_and_back(alarm, vibration, operator):
    alarm_put_out_of_service(alarm=alarm, actor=operator, comment="sensor replaced")
    set_latest(vibration, 7.5)
    sentinel_scan()  # escalation still updates the alarm while it is out of service
    alarm.refresh_from_db()
    assert (alarm.state, alarm.severity) == (AlarmState.OUT_OF_SERVICE, "trip")
    returned = alarm_return_to_service(alarm=alarm, actor=operator)
    assert returned.state == AlarmState.ACTIVE_UNACK
    assert [e[1] for e in _trail(alarm)] == ["active_unack", "out_of_service", "out_of_service", "active_unack"]
    with pytest.raises(Conflict):
        alarm_return_to_service(alarm=alarm, actor=operator)


def test_cleared_alarm_is_final_and_a_new_breach_opens_a_new_alarm(alarm, vibration, operator):
    set_latest(vibration, 1.0)
    sentinel_scan()
    with pytest.raises(Conflict) as exc:
        alarm_acknowledge(alarm=alarm, actor=operator)
    assert exc.value.extra["allowed"] == []
    set_latest(vibration, 5.0)
    sentinel_scan()
    assert Alarm.objects.filter(state=AlarmState.ACTIVE_UNACK).exclude(pk=alarm.pk).count() == 1


@pytest.mark.parametrize("hide", ["shelve", "out_of_service"])
def test_acknowledging_a_shelved_or_out_of_service_alarm_is_a_conflict(alarm, operator, approver, hide):
    alarm_acknowledge(alarm=alarm, actor=operator, comment="first look")
    if hide == "shelve":
        alarm_shelve(alarm=alarm, actor=operator, minutes=30, comment="known")
    else:
        alarm_put_out_of_service(alarm=alarm, actor=operator, comment="instrument swap")
    hidden_state = Alarm.objects.get(pk=alarm.pk).state
    with pytest.raises(Conflict) as exc:
        alarm_acknowledge(alarm=alarm, actor=approver, comment="again")
    assert exc.value.extra["state"] == hidden_state
    assert "acknowledged" not in exc.value.extra["allowed"]
    alarm.refresh_from_db()
    # Still hidden, and the first acknowledgement is kept.
    assert alarm.state == hidden_state
    assert (alarm.acknowledged_by, alarm.acknowledge_comment) == (operator, "first look")
