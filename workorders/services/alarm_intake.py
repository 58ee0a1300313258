"""Creation from alarms: a new alarm opens a `detected` order, a repeat alarm joins the active one."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from core.audit import audit_record
from core.events import publish
from sentinel.models import Alarm
from workorders.choices import ACTIVE_STATUSES, PRIORITY_RANK, Priority, WorkOrderStatus
from workorders.models import WorkOrder, WorkOrderEvent
from workorders.services.lifecycle import alarm_ids_of, lock_work_order, work_order_raise_priority

S = WorkOrderStatus


def priority_for_alarm(alarm: Alarm) -> str:
    """Trip → critical; a high_alert breach → high; a plain alert → medium (keeps the mix ~5/15/80)."""
    if alarm.severity == "trip":
        return Priority.CRITICAL
    if alarm.threshold_field == "high_alert":
        return Priority.HIGH
    return Priority.MEDIUM


def _alarm_message(alarm: Alarm) -> str:
    signal = alarm.signal
    side = "TOO HIGH" if alarm.direction == "high" else "TOO LOW"
    unit = f" {signal.unit}" if signal.unit else ""
    return (
        f"{signal.cell.tag} {signal.display_name} {side}: {alarm.value:g}{unit} "
        f"({alarm.severity} {alarm.threshold_value:g}{unit})"
    )


def work_order_create_from_alarm(*, alarm: Alarm) -> WorkOrder:
    """Open a `detected` work order for a new alarm; announce it; queue the investigation on commit.

    Idempotent per alarm (a unique constraint backs it): a second call returns the existing order.
    """
    existing = WorkOrder.objects.filter(triggered_by_alarm=alarm).first()
    if existing is not None:
        return existing
    signal = alarm.signal
    cell = signal.cell
    # A signal that alarms again while the order its earlier alarm opened is still active (a chattering
    # or returning condition) joins that order instead of opening and investigating one more per alarm.
    # (An order without its alarm, e.g. one whose alarm row was deleted, is not joined.)
    active = (
        WorkOrder.objects.filter(
            triggered_by_signal_def=signal, triggered_by_alarm__isnull=False, status__in=ACTIVE_STATUSES
        )
        .order_by("-created_at", "-pk")
        .first()
    )
    if active is not None:
        return _attach_repeat_alarm(active, alarm)
    try:
        with transaction.atomic():
            work_order = WorkOrder.objects.create(
                cell=cell,
                title=_alarm_message(alarm)[:200],
                description=f"Raised by alarm #{alarm.pk} on {signal}.",
                status=S.DETECTED,
                priority=priority_for_alarm(alarm),
                trigger_anomaly_time=alarm.raised_at,
                triggered_by_signal_def=signal,
                triggered_by_alarm=alarm,
            )
    except IntegrityError:
        return WorkOrder.objects.get(triggered_by_alarm=alarm)
    WorkOrderEvent.objects.create(
        work_order=work_order, from_status="", to_status=S.DETECTED, details={"alarm_id": alarm.pk}
    )
    audit_record(
        actor=None,
        action="work_order.create",
        target_type="work_order",
        target_id=work_order.pk,
        details={"alarm_id": alarm.pk, "priority": work_order.priority},
    )
    # The outbox rows join the caller's transaction; the bus broadcasts them on commit.
    _announce(alarm, work_order)
    from workorders.tasks import investigate_task

    work_order_id = work_order.pk
    transaction.on_commit(lambda: investigate_task.delay(work_order_id))
    return work_order


def _announce(alarm: Alarm, work_order: WorkOrder) -> None:
    """`anomaly_detected` and the sentinel alert banner (outbox rows in the caller's transaction)."""
    signal = alarm.signal
    publish(
        "anomaly_detected",
        {
            "cell_id": signal.cell_id,
            "signal_def_id": signal.pk,
            "value": alarm.value,
            "threshold": alarm.threshold_value,
            "work_order_id": work_order.pk,
            "time": alarm.raised_at.isoformat(),
            "severity": alarm.severity,
            "direction": alarm.direction,
        },
    )
    publish(
        "ui_render",
        {
            "agent": "sentinel",
            "component": "alert_banner",
            "props": {
                "cell_id": signal.cell_id,
                "severity": alarm.severity,
                "message": _alarm_message(alarm),
                "anomaly_id": alarm.pk,
            },
        },
    )


def active_work_order_for_alarm(alarm: Alarm) -> WorkOrder | None:
    """The active order the alarm opened, or the one it joined as a repeat alarm."""
    active = WorkOrder.objects.filter(status__in=ACTIVE_STATUSES)
    return (
        active.filter(triggered_by_alarm=alarm).first()
        or active.filter(events__details__repeat_alarm_id=alarm.pk).order_by("-pk").first()
    )


def _attach_repeat_alarm(active: WorkOrder, alarm: Alarm) -> WorkOrder:
    """Record a repeat alarm on the signal's active order (once), raise its priority if the new
    alarm is more severe, and announce it; no second investigation."""
    with transaction.atomic():
        locked = lock_work_order(active)
        if alarm.pk in alarm_ids_of(locked):
            return locked
        WorkOrderEvent.objects.create(
            work_order=locked,
            from_status=locked.status,
            to_status=locked.status,
            note=f"Alarm #{alarm.pk} on the same signal joined this order.",
            details={"repeat_alarm_id": alarm.pk, "severity": alarm.severity, "value": alarm.value},
        )
        audit_record(
            actor=None,
            action="work_order.repeat_alarm",
            target_type="work_order",
            target_id=locked.pk,
            details={"alarm_id": alarm.pk, "severity": alarm.severity},
        )
        new_priority = priority_for_alarm(alarm)
        if PRIORITY_RANK[new_priority] > PRIORITY_RANK[locked.priority]:
            work_order_raise_priority(
                work_order=locked, priority=new_priority, actor=None, reason=f"repeat alarm #{alarm.pk}"
            )
            locked.refresh_from_db()
        _announce(alarm, locked)
    return locked
