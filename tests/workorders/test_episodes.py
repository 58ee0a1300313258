"""One process upset on a cell opens one work order (and one investigation that sees every alarm).

Alarms on other signals of the same cell within ARIA_ALARM_EPISODE_SECONDS of the order's first
alarm join it, the way a repeat alarm joins its signal's order (workorders/services/alarm_intake.py).
"""

import threading
import time
from datetime import timedelta
from functools import partial

import pytest
from django.db import connection, transaction
from django.test import override_settings
from django.utils import timezone

from core.models import AgentRun, AuditRecord, Event
from sentinel.models import Alarm, Cell
from sentinel.services import alarm_shelve, samples_ingest
from sentinel.signals import alarm_escalated
from tests.sentinel.factories import make_cell, make_signal
from workorders.agents import investigator
from workorders.models import WorkOrder
from workorders.services import work_order_transition
from workorders.services.lifecycle import alarm_ids_of, lock_work_order

pytestmark = pytest.mark.django_db


def _pump(tag: str = "P-02") -> tuple[Cell, dict]:
    cell = make_cell(tag)
    signals = {
        "vibration": make_signal(cell, "vibration_mm_s", alert=4.5, trip=7.1, deadband=0.2),
        "bearing": make_signal(cell, "bearing_temp_c", unit="°C", alert=80.0, trip=95.0, deadband=1.0),
        "discharge": make_signal(cell, "discharge_pressure_bar", unit="bar", low_alert=3.0, alert=9.0, trip=10.5),
        "current": make_signal(cell, "motor_current_a", unit="A", alert=40.0, trip=48.0, deadband=0.5),
    }
    return cell, signals


UPSET = {"vibration": 5.2, "bearing": 84.0, "discharge": 11.6, "current": 42.0}


def _sample(signal, value, at):
    return {"signal_id": signal.pk, "time": at.isoformat(), "value": value}


def test_one_upset_on_four_signals_opens_one_order_and_one_investigation_of_all_four(
    django_capture_on_commit_callbacks,
):
    cell, signals = _pump()
    now = timezone.now()
    # Given a process upset: four signals of P-02 breach in one batch...
    with django_capture_on_commit_callbacks(execute=True):
        result = samples_ingest(samples=[_sample(signals[k], v, now) for k, v in UPSET.items()], now=now)
    # Then four alarms, one work order linking all of them, at the worst alarm's priority...
    assert len(result.evaluation.raised) == 4
    [order] = WorkOrder.objects.filter(cell=cell)
    assert alarm_ids_of(order) == set(result.evaluation.raised)
    assert order.priority == "critical"  # the 11.6 bar trip joined
    joined = AuditRecord.objects.filter(action="work_order.episode_alarm", target_id=str(order.pk))
    assert joined.count() == 3
    # ...every alarm announced against that one order...
    anomalies = Event.objects.filter(type="anomaly_detected")
    assert anomalies.count() == 4 and {e.payload["work_order_id"] for e in anomalies} == {order.pk}
    # ...and one investigation, whose task lists all four alarms.
    [run] = AgentRun.objects.filter(agent="investigator")
    assert "Alarms linked to this order (4)" in run.input_summary
    for alarm_id in result.evaluation.raised:
        assert f"Alarm #{alarm_id}:" in run.input_summary
    for signal in signals.values():
        assert signal.key in run.input_summary


def test_alarms_arriving_one_by_one_within_the_window_join_the_same_order(django_capture_on_commit_callbacks):
    cell, signals = _pump()
    t0 = timezone.now() - timedelta(minutes=20)
    with django_capture_on_commit_callbacks(execute=True):
        for i, (key, value) in enumerate(UPSET.items()):
            at = t0 + timedelta(seconds=90 * i)
            samples_ingest(samples=[_sample(signals[key], value, at)], now=at)
    [order] = WorkOrder.objects.filter(cell=cell)
    assert len(alarm_ids_of(order)) == 4
    assert order.priority == "critical"
    assert AgentRun.objects.filter(agent="investigator").count() == 1
    # The context the agents get lists every linked alarm, whenever they read it.
    message = investigator.task_message(order)
    assert "Alarms linked to this order (4)" in message
    assert '"signal_keys": ["bearing_temp_c", "discharge_pressure_bar", "motor_current_a", "vibration_mm_s"]' in message


@override_settings(ARIA_ALARM_EPISODE_SECONDS=300)
def test_an_alarm_after_the_episode_window_opens_its_own_order():
    cell, signals = _pump()
    t0 = timezone.now() - timedelta(minutes=30)
    samples_ingest(samples=[_sample(signals["vibration"], 5.2, t0)], now=t0)
    later = t0 + timedelta(seconds=301)
    samples_ingest(samples=[_sample(signals["bearing"], 84.0, later)], now=later)
    orders = list(WorkOrder.objects.filter(cell=cell).order_by("pk"))
    assert [o.triggered_by_signal_def.key for o in orders] == ["vibration_mm_s", "bearing_temp_c"]
    assert all(len(alarm_ids_of(o)) == 1 for o in orders)


@override_settings(ARIA_ALARM_EPISODE_SECONDS=300)
def test_a_repeat_of_a_joined_signal_joins_that_order_after_the_window():
    cell, signals = _pump()
    t0 = timezone.now() - timedelta(minutes=30)
    samples_ingest(samples=[_sample(signals["vibration"], 5.2, t0)], now=t0)
    t1 = t0 + timedelta(seconds=60)
    samples_ingest(samples=[_sample(signals["bearing"], 84.0, t1)], now=t1)  # joins (episode)
    t2 = t1 + timedelta(seconds=30)
    samples_ingest(samples=[_sample(signals["bearing"], 70.0, t2)], now=t2)  # clears
    t3 = t0 + timedelta(seconds=900)
    samples_ingest(samples=[_sample(signals["bearing"], 85.0, t3)], now=t3)  # a repeat, past the window
    [order] = WorkOrder.objects.filter(cell=cell)
    assert len(alarm_ids_of(order)) == 3


def test_another_cell_and_a_closed_order_are_never_joined(operator):
    cell, signals = _pump("P-02")
    other_cell, other = _pump("P-03")
    now = timezone.now() - timedelta(minutes=5)
    samples_ingest(samples=[_sample(signals["vibration"], 5.2, now)], now=now)
    samples_ingest(samples=[_sample(other["vibration"], 5.2, now)], now=now)
    assert WorkOrder.objects.filter(cell=cell).count() == 1 and WorkOrder.objects.filter(cell=other_cell).count() == 1
    first = WorkOrder.objects.get(cell=cell)
    work_order_transition(work_order=first, to_status="cancelled", actor=operator)
    at = now + timedelta(seconds=30)
    samples_ingest(samples=[_sample(signals["bearing"], 84.0, at)], now=at)
    assert WorkOrder.objects.filter(cell=cell).count() == 2
    assert len(alarm_ids_of(first)) == 1


def test_escalation_and_closing_reach_the_alarms_an_episode_joined(operator):
    cell, signals = _pump()
    now = timezone.now() - timedelta(minutes=5)
    samples_ingest(samples=[_sample(signals["bearing"], 84.0, now)], now=now)
    at = now + timedelta(seconds=20)
    samples_ingest(samples=[_sample(signals["vibration"], 5.0, at)], now=at)
    [order] = WorkOrder.objects.filter(cell=cell)
    joined = Alarm.objects.get(signal=signals["vibration"])
    assert order.priority == "medium"
    # The joined alarm escalates to trip: the order it joined becomes critical.
    at += timedelta(seconds=5)
    samples_ingest(samples=[_sample(signals["vibration"], 7.6, at)], now=at)
    order.refresh_from_db()
    assert order.priority == "critical" and WorkOrder.objects.filter(cell=cell).count() == 1
    # Shelved until the order closes, it comes back when the order is completed.
    alarm_shelve(alarm=joined, actor=operator, until_work_order_closes=True, comment="WO open")
    WorkOrder.objects.filter(pk=order.pk).update(status="in_progress")
    work_order_transition(work_order=order, to_status="completed", actor=operator)
    joined.refresh_from_db()
    assert joined.state == "active_unack"


def test_escalated_signal_is_sent_for_the_joined_alarm(operator):
    """The receiver finds the joined order for an escalation it did not see raise (no second order)."""
    cell, signals = _pump()
    now = timezone.now() - timedelta(minutes=5)
    samples_ingest(samples=[_sample(signals["bearing"], 84.0, now), _sample(signals["vibration"], 5.0, now)], now=now)
    joined = Alarm.objects.get(signal=signals["vibration"])
    Alarm.objects.filter(pk=joined.pk).update(severity="trip", threshold_field="trip", threshold_value=7.1, value=7.5)
    joined.refresh_from_db()
    alarm_escalated.send(sender=Alarm, alarm=joined, previous_severity="alert", previous_threshold_field="alert")
    assert WorkOrder.objects.filter(cell=cell).count() == 1
    assert WorkOrder.objects.get(cell=cell).priority == "critical"


def _concurrently(*calls) -> list[BaseException]:
    """Run each call in its own thread (own database connection), released together."""
    barrier = threading.Barrier(len(calls))
    errors: list[BaseException] = []

    def run(call) -> None:
        try:
            barrier.wait(timeout=10)
            call()
        except BaseException as exc:  # collected for the caller's assertion
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return errors


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_four_concurrent_alarms_on_one_cell_open_exactly_one_order_on_postgresql():
    assert connection.vendor == "postgresql"
    for round_no in range(8):
        cell, signals = _pump(f"C-{round_no:02d}")
        now = timezone.now()
        calls = [
            partial(samples_ingest, samples=[_sample(signals[key], value, now)], now=now)
            for key, value in UPSET.items()
        ]
        assert _concurrently(*calls) == []
        orders = list(WorkOrder.objects.filter(cell=cell))
        assert len(orders) == 1, f"round {round_no}: {len(orders)} orders"
        assert len(alarm_ids_of(orders[0])) == 4
        assert orders[0].priority == "critical"


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_locking_a_work_order_waits_for_its_cell_before_holding_the_order_on_postgresql():
    """Lock order (docs/KERNEL.md): the cell row (the intake lock) before any work order. While an
    intake holds the cell, a change to the order waits for the cell without holding the order —
    so the intake can still lock the order (CI saw both other orders deadlock)."""
    cell, signals = _pump("C-LOCK")
    now = timezone.now()
    samples_ingest(samples=[_sample(signals["bearing"], 84.0, now)], now=now)
    order = WorkOrder.objects.get(cell=cell)
    cell_held, release, intake_tried = threading.Event(), threading.Event(), threading.Event()
    locked_order: list = []

    def intake_holding_the_cell() -> None:
        try:
            with transaction.atomic():
                list(Cell.objects.select_for_update().filter(pk=cell.pk).values_list("pk"))
                cell_held.set()
                release.wait(timeout=20)
                # the order is still free for the intake while the change waits for the cell
                rows = WorkOrder.objects.select_for_update(nowait=True).filter(pk=order.pk).values_list("pk")
                locked_order.extend(rows)
        finally:
            intake_tried.set()
            connection.close()

    def change_to_the_order() -> None:
        cell_held.wait(timeout=20)
        try:
            with transaction.atomic():
                lock_work_order(order)
                intake_tried.wait(timeout=10)  # hold what it locked until the intake has tried
        finally:
            connection.close()

    threads = [threading.Thread(target=t) for t in (intake_holding_the_cell, change_to_the_order)]
    for thread in threads:
        thread.start()
    cell_held.wait(timeout=20)
    time.sleep(0.5)  # let the change reach its lock (a lock wait cannot be observed from here)
    release.set()
    for thread in threads:
        thread.join(timeout=30)
    assert locked_order == [(order.pk,)]
