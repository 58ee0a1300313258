"""Creation from alarms: a new alarm opens a `detected` order; a repeat alarm joins its signal's
active order; an alarm on another signal of the same cell within the episode window
(`ARIA_ALARM_EPISODE_SECONDS` after the order's first alarm) joins that order too — one process
upset, one work order, one investigation.

The cell row is the intake lock: taken after the alarm rows and before any work-order row (the
lock order in docs/KERNEL.md), it makes concurrent alarms on one cell open exactly one order.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q

from core.audit import audit_record
from core.events import publish
from sentinel.models import Alarm, Cell
from workorders.choices import ACTIVE_STATUSES, PRIORITY_RANK, Priority, WorkOrderStatus
from workorders.dispatch import investigation_dispatch
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
    # The intake lock: a concurrent alarm on this cell waits here, then sees the order made first.
    list(Cell.objects.select_for_update().filter(pk=cell.pk).values_list("pk"))
    active = _active_order_for_signal(signal.pk)
    if active is not None:
        return _attach_alarm(active, alarm, episode=False)
    sibling = _episode_order(cell.pk, alarm)
    if sibling is not None:
        return _attach_alarm(sibling, alarm, episode=True)
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
    investigation_dispatch(work_order.pk, reason="opened")  # an outbox row; a broker outage fails nothing
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


def episode_window() -> timedelta:
    return timedelta(seconds=float(getattr(settings, "ARIA_ALARM_EPISODE_SECONDS", 600.0)))


def _alarm_orders():
    """Active orders an alarm opened (an order without its alarm, e.g. one whose alarm row was
    deleted, or one a person opened, is not joined)."""
    return WorkOrder.objects.filter(triggered_by_alarm__isnull=False, status__in=ACTIVE_STATUSES)


def _active_order_for_signal(signal_id: int) -> WorkOrder | None:
    """The active order this signal's earlier alarm opened or joined: a signal that alarms again
    (a chattering or returning condition) joins it instead of opening and investigating one more."""
    joined = Q(triggered_by_signal_def_id=signal_id) | Q(events__details__episode_signal_id=signal_id)
    return _alarm_orders().filter(joined).order_by("-created_at", "-pk").first()


def _episode_order(cell_id: int, alarm: Alarm) -> WorkOrder | None:
    """The cell's active order whose first alarm came within the episode window of this one."""
    window = episode_window()
    if window <= timedelta(0):
        return None
    return (
        _alarm_orders()
        .filter(
            cell_id=cell_id,
            trigger_anomaly_time__gte=alarm.raised_at - window,
            trigger_anomaly_time__lte=alarm.raised_at + window,
        )
        .order_by("-created_at", "-pk")
        .first()
    )


def active_work_order_for_alarm(alarm: Alarm) -> WorkOrder | None:
    """The active order the alarm opened, or the one it joined (repeat or same episode)."""
    active = WorkOrder.objects.filter(status__in=ACTIVE_STATUSES)
    joined = Q(events__details__repeat_alarm_id=alarm.pk) | Q(events__details__episode_alarm_id=alarm.pk)
    return active.filter(triggered_by_alarm=alarm).first() or active.filter(joined).order_by("-pk").first()


def _attach_alarm(active: WorkOrder, alarm: Alarm, *, episode: bool) -> WorkOrder:
    """Record an alarm on an active order (once): a repeat of its signal, or another signal of
    the same cell in the same episode. Raise the order's priority if the alarm is more severe and
    announce it; no second investigation (one still to run sees every linked alarm)."""
    with transaction.atomic():
        locked = lock_work_order(active)
        if alarm.pk in alarm_ids_of(locked):
            return locked
        signal = alarm.signal
        if episode:
            note = f"Alarm #{alarm.pk} on {signal.display_name or signal.key} joined this order (same upset on {signal.cell.tag})."
            details = {"episode_alarm_id": alarm.pk, "episode_signal_id": signal.pk}
            action = "work_order.episode_alarm"
        else:
            note = f"Alarm #{alarm.pk} on the same signal joined this order."
            details = {"repeat_alarm_id": alarm.pk}
            action = "work_order.repeat_alarm"
        WorkOrderEvent.objects.create(
            work_order=locked,
            from_status=locked.status,
            to_status=locked.status,
            note=note[:500],
            details={**details, "severity": alarm.severity, "value": alarm.value},
        )
        audit_record(
            actor=None,
            action=action,
            target_type="work_order",
            target_id=locked.pk,
            details={"alarm_id": alarm.pk, "severity": alarm.severity, "signal_id": signal.pk},
        )
        new_priority = priority_for_alarm(alarm)
        if PRIORITY_RANK[new_priority] > PRIORITY_RANK[locked.priority]:
            work_order_raise_priority(
                work_order=locked,
                priority=new_priority,
                actor=None,
                reason=f"{'episode' if episode else 'repeat'} alarm #{alarm.pk}",
            )
            locked.refresh_from_db()
        _announce(alarm, locked)
    return locked
