"""A signal that alarms again while its work order is active joins that order (no order per alarm)."""

import pytest
from django.db import transaction

from core.models import AgentRun, AuditRecord, Event
from sentinel.models import Alarm
from sentinel.signals import alarm_escalated, alarm_raised
from tests.workorders import factories as f
from workorders.models import WorkOrder
from workorders.services import work_order_transition

pytestmark = pytest.mark.django_db


def raise_alarm(signal, **kw) -> Alarm:
    with transaction.atomic():
        alarm = f.make_alarm(signal, **kw)
        alarm_raised.send(sender=Alarm, alarm=alarm)
    return alarm


def clear(alarm: Alarm) -> None:
    Alarm.objects.filter(pk=alarm.pk).update(state="cleared")


def test_a_chattering_signal_keeps_one_work_order_and_one_investigation(
    plant, vibration, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        first = raise_alarm(vibration)
        for _ in range(4):
            clear(first)
            first = raise_alarm(vibration)
    assert WorkOrder.objects.count() == 1
    wo = WorkOrder.objects.get()
    assert wo.status == "open"
    assert AgentRun.objects.filter(agent="investigator").count() == 1
    repeats = [e for e in wo.events.all() if "repeat_alarm_id" in e.details]
    assert len(repeats) == 4 and repeats[-1].details["repeat_alarm_id"] == first.pk
    # operators still see every alarm, pointing at the one order
    anomalies = Event.objects.filter(type="anomaly_detected")
    assert anomalies.count() == 5 and {e.payload["work_order_id"] for e in anomalies} == {wo.pk}
    assert AuditRecord.objects.filter(action="work_order.repeat_alarm", target_id=str(wo.pk)).count() == 4


def test_after_the_order_closes_a_new_alarm_opens_a_new_order(vibration, operator):
    first = raise_alarm(vibration)
    wo = WorkOrder.objects.get(triggered_by_alarm=first)
    work_order_transition(work_order=wo, to_status="cancelled", actor=operator)
    clear(first)
    second = raise_alarm(vibration)
    assert WorkOrder.objects.get(triggered_by_alarm=second).pk != wo.pk


def test_a_repeat_alarm_raises_priority_and_escalation_reaches_the_joined_order(vibration):
    first = raise_alarm(vibration)
    wo = WorkOrder.objects.get(triggered_by_alarm=first)
    clear(first)
    second = raise_alarm(vibration)
    wo.refresh_from_db()
    assert wo.priority == "medium"
    Alarm.objects.filter(pk=second.pk).update(severity="trip", threshold_field="trip", threshold_value=7.1, value=7.5)
    second.refresh_from_db()
    alarm_escalated.send(sender=Alarm, alarm=second, previous_severity="alert", previous_threshold_field="alert")
    wo.refresh_from_db()
    assert wo.priority == "critical"
    assert WorkOrder.objects.count() == 1


def test_a_repeat_alarm_shelved_until_the_order_closes_is_unshelved_when_it_completes(vibration, operator):
    first = raise_alarm(vibration)
    wo = WorkOrder.objects.get(triggered_by_alarm=first)
    clear(first)
    second = raise_alarm(vibration)
    Alarm.objects.filter(pk=second.pk).update(
        state="shelved", shelved_until_work_order_closes=True, state_before_shelve="active_unack"
    )
    WorkOrder.objects.filter(pk=wo.pk).update(status="in_progress")
    work_order_transition(work_order=wo, to_status="completed", actor=operator)
    second.refresh_from_db()
    assert second.state != "shelved"
