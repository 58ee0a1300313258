"""Return to service racing an admin disabling the signal or taking its cell off onboarding (PostgreSQL).

alarm_return_to_service refuses while the signal is disabled (409 signal_not_evaluated), and the
admin's disable puts the signal's open alarms out of service in its transaction. The return read
`enabled` unlocked: an admin who had disabled the signal and run that pass (the alarm was out of
service, so it was left alone) but not yet committed let the return read enabled = true and
annunciate the alarm again — a disabled signal's alarm nothing would ever clear. Now the return
locks the signal row first (lock order: signals → alarms), waits for the admin's commit, and is
refused; the cell's onboarding is read on its locked row (after the alarm: signals → alarms →
cell)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone

from core.errors import Conflict
from sentinel.models import Alarm, Cell, SignalDefinition
from sentinel.services import (
    alarm_put_out_of_service,
    alarm_raise,
    alarm_return_to_service,
    alarms_out_of_service_for_unevaluated,
)
from sentinel.thresholds import evaluate_threshold
from tests.conftest import wait_until
from tests.sentinel.factories import set_latest


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("off", ["signal", "cell"])
def test_a_return_racing_the_signal_disable_waits_and_is_refused(vibration, operator, admin_user, off):
    assert connection.vendor == "postgresql"
    set_latest(vibration, 5.0)
    alarm = alarm_raise(signal=vibration, breach=evaluate_threshold(vibration, 5.0), value=5.0, time=timezone.now())
    alarm_put_out_of_service(alarm=alarm, actor=operator, comment="transmitter swap")
    returner: dict = {}

    def return_to_service() -> None:  # the operator's Return to service
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                returner["pid"] = cursor.fetchone()[0]
            alarm_return_to_service(alarm=alarm.pk, actor=operator)
            returner["outcome"] = "returned"
        except Conflict as exc:
            returner["outcome"] = exc.code
        finally:
            connection.close()

    def blocked() -> bool:
        if "pid" not in returner:
            return False
        with connection.cursor() as cursor:
            cursor.execute("SELECT cardinality(pg_blocking_pids(%s))", [returner["pid"]])
            return cursor.fetchone()[0] > 0

    thread = threading.Thread(target=return_to_service)
    with transaction.atomic():  # the admin's save: the signal disabled, then its open alarms taken out
        if off == "signal":
            SignalDefinition.objects.filter(pk=vibration.pk).update(enabled=False)
        else:  # the cell taken off onboarding
            Cell.objects.filter(pk=vibration.cell_id).update(onboarding_complete=False)
        alarms_out_of_service_for_unevaluated(signal_ids=[vibration.pk], actor=admin_user, reason="disabled")
        thread.start()
        wait_until(lambda: "outcome" in returner or blocked())
    thread.join(timeout=30)

    assert not thread.is_alive()
    assert returner["outcome"] == "signal_not_evaluated"
    assert Alarm.objects.get(pk=alarm.pk).state == "out_of_service"


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_disable_racing_an_operator_putting_the_alarm_out_of_service_still_saves(vibration, operator, admin_user):
    """The admin's pass listed the alarm unlocked (active), then waited for the operator's 'Put out
    of service' to commit and found it out of service already: before, the 409 of that move failed
    the whole admin save (its disable rolled back, a 500); now an alarm that left the open states in
    the meantime is skipped — it is out of service (or cleared) as the pass wanted."""
    assert connection.vendor == "postgresql"
    set_latest(vibration, 5.0)
    alarm = alarm_raise(signal=vibration, breach=evaluate_threshold(vibration, 5.0), value=5.0, time=timezone.now())
    admin: dict = {}

    def disable() -> None:  # the admin's save, in its own transaction
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                admin["pid"] = cursor.fetchone()[0]
            with transaction.atomic():
                SignalDefinition.objects.filter(pk=vibration.pk).update(enabled=False)
                moved = alarms_out_of_service_for_unevaluated(
                    signal_ids=[vibration.pk], actor=admin_user, reason="disabled"
                )
            admin["outcome"] = [a.pk for a in moved]
        except Conflict as exc:
            admin["outcome"] = exc.code
        finally:
            connection.close()

    def blocked() -> bool:
        if "pid" not in admin:
            return False
        with connection.cursor() as cursor:
            cursor.execute("SELECT cardinality(pg_blocking_pids(%s))", [admin["pid"]])
            return cursor.fetchone()[0] > 0

    thread = threading.Thread(target=disable)
    with transaction.atomic():  # the operator's Put out of service holds the alarm while the admin lists it
        alarm_put_out_of_service(alarm=alarm.pk, actor=operator, comment="transmitter swap")
        thread.start()
        wait_until(lambda: "outcome" in admin or blocked())
    thread.join(timeout=30)

    assert not thread.is_alive()
    assert admin["outcome"] == []
    assert SignalDefinition.objects.get(pk=vibration.pk).enabled is False
    assert Alarm.objects.get(pk=alarm.pk).state == "out_of_service"
