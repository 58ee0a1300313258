"""The lock order (docs/KERNEL.md), proved on PostgreSQL: an escalation and a close racing on one
work order and its alarm never deadlock and always leave a consistent state.

Escalation: the detector locks the alarm, then the `alarm_escalated` receiver locks the work order.
Close: `work_order_transition` to completed unshelves the alarm shelved "until the work order
closes". Before the fix the close locked the work order, then the alarm — the opposite order —
and PostgreSQL broke the cycle by failing one of them (logged and swallowed by a savepoint, so the
order stayed at its old priority or the alarm stayed shelved for good).
"""

import logging
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models.signals import post_save
from django.utils import timezone

from core.audit import audit_verify
from core.models import AuditRecord
from sentinel.models import Alarm
from sentinel.services import alarm_shelve, samples_ingest
from tests.sentinel.factories import make_cell, make_signal
from workorders.models import WorkOrder
from workorders.services import work_order_transition

ROUNDS = 20
# Held between the first lock and the second on both paths, so the two transactions overlap.
DWELL_SECONDS = 0.05
SLOW_ACTIONS = {"alarm.escalate", "work_order.transition"}


def _dwell(sender, instance: AuditRecord, created: bool, **kwargs) -> None:
    if created and instance.action in SLOW_ACTIONS:
        threading.Event().wait(DWELL_SECONDS)


def _race(*calls) -> list[BaseException]:
    barrier = threading.Barrier(len(calls))
    errors: list[BaseException] = []

    def run(call) -> None:
        try:
            barrier.wait(timeout=10)
            call()
        except BaseException as exc:  # asserted by the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a path is still waiting: lock cycle"
    return errors


def _round(index: int, operator) -> tuple[Alarm, WorkOrder]:
    """A vibration alert with its work order in progress, the alarm shelved until the order closes."""
    cell = make_cell(f"L-{index:03d}")
    vibration = make_signal(cell, "vibration_mm_s", alert=4.5, trip=7.1, deadband=0.2)
    at = timezone.now() - timedelta(seconds=5)
    samples_ingest(samples=[{"signal_id": vibration.pk, "time": at.isoformat(), "value": 5.0}], now=at)
    alarm = Alarm.objects.get(signal=vibration)
    order = WorkOrder.objects.get(triggered_by_alarm=alarm)
    WorkOrder.objects.filter(pk=order.pk).update(status="in_progress")
    alarm_shelve(alarm=alarm, actor=operator, until_work_order_closes=True, comment="WO open")
    return alarm, order


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_escalation_and_close_never_deadlock_and_agree(operator, caplog):
    assert connection.vendor == "postgresql"
    caplog.set_level(logging.ERROR)
    post_save.connect(_dwell, sender=AuditRecord, dispatch_uid="test_lock_order_dwell")
    try:
        for index in range(ROUNDS):
            alarm, order = _round(index, operator)
            trip_at = timezone.now()

            def escalate(alarm=alarm, trip_at=trip_at) -> None:
                samples_ingest(
                    samples=[{"signal_id": alarm.signal_id, "time": trip_at.isoformat(), "value": 7.6}], now=trip_at
                )

            def close(order=order) -> None:
                work_order_transition(work_order=order.pk, to_status="completed", actor=operator, note="repaired")

            errors = _race(escalate, close)
            assert errors == [], f"round {index}: {errors!r}"

            # Both paths took effect, whichever went first...
            alarm.refresh_from_db()
            order.refresh_from_db()
            assert order.status == "completed"
            assert (alarm.severity, alarm.value) == ("trip", 7.6)
            assert alarm.state == "active_unack", f"round {index}: the close did not unshelve the alarm"
            # ...and agree: an escalation committed before the close raised the order's priority.
            escalated = AuditRecord.objects.get(action="alarm.escalate", target_id=str(alarm.pk)).pk
            closed = AuditRecord.objects.get(
                action="work_order.transition", target_id=str(order.pk), details__to="completed"
            ).pk
            assert order.priority == ("critical" if escalated < closed else "medium"), f"round {index}"
    finally:
        post_save.disconnect(sender=AuditRecord, dispatch_uid="test_lock_order_dwell")
    deadlocks = [r for r in caplog.records if "deadlock" in (r.getMessage() + str(r.exc_info)).lower()]
    swallowed = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert deadlocks == [] and swallowed == [], [r.getMessage() for r in swallowed]
    assert audit_verify() is None
