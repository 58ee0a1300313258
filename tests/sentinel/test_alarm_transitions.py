"""Alarm moves go through the kernel's transition helper (core.transitions) for the whole move:
the detector's bulk clear costs a constant number of queries whatever the number of alarms, every
move leaves its AlarmEvent and audit record (the chain intact), and a batch with one illegal move
is refused whole."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.audit import audit_verify
from core.errors import Conflict
from core.models import AuditRecord
from sentinel.models import Alarm, AlarmEvent
from sentinel.services import (
    alarm_acknowledge,
    alarm_clear_many,
    alarm_shelve,
    alarm_unshelve,
    alarm_unshelve_expired,
)
from sentinel.services._common import alarm_move_many, lock_alarms
from tests.sentinel.factories import make_cell, make_signal, set_latest
from tests.workorders.factories import make_alarm

pytestmark = pytest.mark.django_db


def _alarms(n: int) -> list[Alarm]:
    cell = make_cell()
    return [make_alarm(make_signal(cell, f"sig_{cell.pk}_{i}")) for i in range(n)]


def _clear_queries(alarms: list[Alarm], operator) -> int:
    alarm_acknowledge(alarm=alarms[0], actor=operator)  # a mix of states in the batch
    with CaptureQueriesContext(connection) as ctx:
        cleared = alarm_clear_many(values={a.pk: 1.0 for a in alarms})
    assert sorted(a.pk for a in cleared) == sorted(a.pk for a in alarms)
    return len(ctx.captured_queries)


def test_bulk_clear_costs_the_same_queries_for_3_and_30_alarms(operator):
    small = _clear_queries(_alarms(3), operator)
    large = _clear_queries(_alarms(30), operator)
    assert small == large
    assert large <= 10  # lock, one UPDATE, one AlarmEvent INSERT, audit head + one INSERT, alarm_changed, 2 savepoints


def test_bulk_clear_records_each_move(operator):
    alarms = _alarms(4)
    alarm_acknowledge(alarm=alarms[1], actor=operator)
    alarm_clear_many(values={a.pk: 2.5 for a in alarms})
    for alarm in alarms:
        alarm.refresh_from_db()
        assert alarm.state == "cleared" and alarm.cleared_at is not None
        event = AlarmEvent.objects.get(alarm=alarm, to_state="cleared")
        assert event.details["value"] == 2.5
        assert event.details["acknowledged"] is (alarm.pk == alarms[1].pk)
        record = AuditRecord.objects.get(action="alarm.clear", target_id=str(alarm.pk))
        assert (record.details["from_state"], record.details["to_state"]) == (event.from_state, "cleared")
        assert record.actor_label == "system"
    assert audit_verify() is None  # the bulk append keeps the hash chain linear


def test_a_batch_with_one_illegal_move_is_refused_whole(operator):
    alarms = _alarms(3)
    alarm_shelve(alarm=alarms[2], actor=operator, minutes=30, comment="known")  # shelved → acknowledged is illegal
    audits, events = AuditRecord.objects.count(), AlarmEvent.objects.count()
    with pytest.raises(Conflict) as exc, transaction.atomic():
        locked = lock_alarms([a.pk for a in alarms], states=["active_unack", "shelved"])
        alarm_move_many(locked, "acknowledged", action="acknowledge", verb="acknowledge", actor=operator)
    assert exc.value.code == "illegal_transition" and exc.value.extra["state"] == "shelved"
    assert exc.value.message == f"Alarm #{alarms[2].pk} is shelved; cannot acknowledge."
    assert sorted(Alarm.objects.values_list("state", flat=True)) == ["active_unack", "active_unack", "shelved"]
    assert (AuditRecord.objects.count(), AlarmEvent.objects.count()) == (audits, events)


def test_unshelve_restores_acknowledged_which_the_operator_map_refuses(operator):
    alarm = _alarms(1)[0]
    alarm_acknowledge(alarm=alarm, actor=operator)
    alarm_shelve(alarm=alarm, actor=operator, minutes=5, comment="known")
    with pytest.raises(Conflict):
        alarm_acknowledge(alarm=alarm, actor=operator)  # not a verb from shelved
    assert alarm_unshelve(alarm=alarm, actor=operator, comment="back").state == "acknowledged"
    record = AuditRecord.objects.filter(action="alarm.unshelve").get()
    assert (record.details["from_state"], record.details["to_state"], record.details["comment"]) == (
        "shelved",
        "acknowledged",
        "back",
    )
    assert record.actor_label == operator.get_username()


def _expired_shelves(n: int, operator) -> list[Alarm]:
    """n shelved alarms whose shelve ran out: the first acknowledged before it, the second with
    its signal back in band, the rest still breaching."""
    alarms = _alarms(n)
    alarm_acknowledge(alarm=alarms[0], actor=operator)
    for i, alarm in enumerate(alarms):
        set_latest(alarm.signal, 1.0 if i == 1 else 5.0)
        alarm_shelve(alarm=alarm, actor=operator, minutes=10, comment="known")
    Alarm.objects.filter(pk__in=[a.pk for a in alarms]).update(shelved_until=timezone.now() - timedelta(seconds=1))
    return alarms


def test_expired_shelves_return_in_bulk_with_the_same_queries_for_3_and_12(operator):
    counts = []
    for n in (3, 12):
        alarms = _expired_shelves(n, operator)
        with CaptureQueriesContext(connection) as ctx:
            returned = alarm_unshelve_expired()
        counts.append(len(ctx.captured_queries))
        assert sorted(a.pk for a in returned) == sorted(a.pk for a in alarms)
        states = {a.pk: a.state for a in Alarm.objects.filter(pk__in=[a.pk for a in alarms])}
        assert states[alarms[0].pk] == "acknowledged"  # the state before the shelve
        assert states[alarms[1].pk] == "cleared"  # its value is back in band
        assert {states[a.pk] for a in alarms[2:]} == {"active_unack"}
        records = AuditRecord.objects.filter(action="alarm.unshelve", target_id__in=[str(a.pk) for a in alarms])
        assert records.count() == n and {r.details["comment"] for r in records} == {"shelve expired"}
        assert AlarmEvent.objects.get(alarm=alarms[1], to_state="cleared").details["value"] == 1.0
    assert counts[0] == counts[1]
    assert alarm_unshelve_expired() == []  # nothing left to return
