"""Every work-order write: creation from an alarm, transitions, RCA, generated order, edits."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.audit import audit_record
from core.errors import Conflict, InvalidInput
from core.events import publish
from sentinel.models import Alarm
from workorders.choices import (
    ACTIVE_STATUSES,
    CLOSED_STATUSES,
    PRIORITY_RANK,
    Priority,
    WorkOrderStatus,
    allowed_transitions,
)
from workorders.models import FailureHistory, WorkOrder, WorkOrderEvent

logger = logging.getLogger(__name__)
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


def alarm_ids_of(work_order: WorkOrder) -> set[int]:
    """The alarm that opened the order and every repeat alarm that joined it."""
    ids = {work_order.triggered_by_alarm_id} if work_order.triggered_by_alarm_id else set()
    for details in work_order.events.filter(details__has_key="repeat_alarm_id").values_list("details", flat=True):
        ids.add(int(details["repeat_alarm_id"]))
    return ids


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
        locked = _lock(active)
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


def _transition_locked(
    work_order: WorkOrder,
    to_status: str,
    *,
    actor: AbstractBaseUser | None,
    note: str = "",
    details: dict | None = None,
) -> WorkOrder:
    """Apply one transition to a row already locked by the caller."""
    allowed = allowed_transitions(work_order.status)
    if to_status not in allowed:
        raise Conflict(
            f"Work order {work_order.pk} cannot go from {work_order.status} to {to_status}.",
            field="to_status",
            code="illegal_transition",
            allowed=allowed,
        )
    from_status = work_order.status
    work_order.status = to_status
    work_order.save()
    WorkOrderEvent.objects.create(
        work_order=work_order,
        from_status=from_status,
        to_status=to_status,
        actor=actor if actor is not None and actor.is_authenticated else None,
        note=note[:500],
        details=details or {},
    )
    audit_record(
        actor=actor,
        action="work_order.transition",
        target_type="work_order",
        target_id=work_order.pk,
        details={"from": from_status, "to": to_status, "note": note[:500]},
    )
    if to_status in CLOSED_STATUSES:
        _on_close(work_order, actor)
    return work_order


def _lock(work_order: WorkOrder | int) -> WorkOrder:
    pk = work_order.pk if isinstance(work_order, WorkOrder) else work_order
    return WorkOrder.objects.select_for_update().select_related("cell").get(pk=pk)


def work_order_transition(
    *, work_order: WorkOrder | int, to_status: str, actor: AbstractBaseUser | None, note: str = ""
) -> WorkOrder:
    """Move a work order along the lifecycle map; illegal moves raise Conflict(allowed=[...])."""
    if to_status not in S.values:
        raise InvalidInput(f"Unknown status {to_status!r}.", field="to_status", allowed=list(S.values))
    with transaction.atomic():
        locked = _lock(work_order)
        return _transition_locked(locked, to_status, actor=actor, note=note)


def _on_close(work_order: WorkOrder, actor: AbstractBaseUser | None) -> None:
    """Closing an order resolves its failure row and lets sentinel unshelve alarms waiting on it."""
    if work_order.status == S.COMPLETED:
        FailureHistory.objects.filter(work_order=work_order, resolved_time__isnull=True).update(
            resolved_time=timezone.now()
        )
    try:
        from sentinel.services.alarms import alarm_unshelve_for_work_order_closed
    except ImportError:  # sentinel without the hook: nothing waits on work orders
        return
    alarms = Alarm.objects.filter(
        pk__in=alarm_ids_of(work_order), shelved_until_work_order_closes=True, state="shelved"
    )
    for alarm_id in alarms.values_list("pk", flat=True):
        try:
            with transaction.atomic():
                alarm_unshelve_for_work_order_closed(alarm=alarm_id, actor=actor, work_order_id=work_order.pk)
        except Exception:  # closing the order must not fail because an alarm moved on meanwhile
            logger.exception("Could not unshelve alarm %s for work order %s", alarm_id, work_order.pk)


def failure_mode_from_rca(rca: dict[str, Any]) -> str:
    """`failure_mode` when given, else the slug the root cause starts with (`bearing_wear: …`)."""
    mode = str(rca.get("failure_mode") or "").strip()
    if not mode:
        head = str(rca.get("root_cause") or "").split(":", 1)[0].split(" ", 1)[0].strip().lower()
        mode = head if head.replace("_", "").isalpha() and "_" in head else "unknown"
    return mode[:64]


def work_order_apply_rca(
    *,
    work_order: WorkOrder | int,
    rca: dict[str, Any],
    agent: str,
    actor: AbstractBaseUser | None,
    fallback: bool = False,
) -> WorkOrder | None:
    """Record the RCA and move the order to `analyzed`. Returns None when the order is no longer
    `detected` (a retried or duplicate investigation), so there is never a second RCA."""
    with transaction.atomic():
        locked = _lock(work_order)
        if locked.status != S.DETECTED:
            return None
        summary = str(rca.get("root_cause") or "").strip()
        if rca.get("recommended_action"):
            summary = f"{summary} Recommended: {rca['recommended_action']}".strip()
        locked.rca_summary = summary[:4000]
        locked.confidence = max(0.0, min(1.0, float(rca.get("confidence") or 0.0)))
        locked.rca_details = {**rca, "failure_mode": failure_mode_from_rca(rca), "agent": agent, "fallback": fallback}
        _transition_locked(locked, S.ANALYZED, actor=actor, note=f"RCA by {agent}", details={"fallback": fallback})
        if not fallback:
            FailureHistory.objects.create(
                cell=locked.cell,
                failure_time=locked.trigger_anomaly_time or locked.created_at,
                failure_mode=failure_mode_from_rca(rca),
                root_cause=str(rca.get("root_cause") or "")[:4000],
                signal_patterns=rca.get("signal_patterns") or {},
                work_order=locked,
            )
        publish(
            "rca_ready",
            {"work_order_id": locked.pk, "rca_summary": locked.rca_summary, "confidence": locked.confidence},
        )
        if not fallback:
            from workorders.tasks import generate_task

            pk = locked.pk
            transaction.on_commit(lambda: generate_task.delay(pk))
    return locked


GENERATED_FIELDS = (
    "title",
    "description",
    "recommended_actions",
    "required_parts",
    "priority",
    "estimated_duration_min",
    "suggested_window_start",
    "suggested_window_end",
    "required_skills",
)


def work_order_apply_generated(
    *, work_order: WorkOrder | int, order: dict[str, Any], agent: str, actor: AbstractBaseUser | None
) -> WorkOrder | None:
    """Write the generated repair order and move the order to `open`; None if no longer `analyzed`."""
    with transaction.atomic():
        locked = _lock(work_order)
        if locked.status != S.ANALYZED:
            return None
        for name in GENERATED_FIELDS:
            if name in order and order[name] is not None:
                setattr(locked, name, _coerce(name, order[name]))
        locked.generated_by_agent = agent
        _transition_locked(locked, S.OPEN, actor=actor, note=f"Repair order by {agent}")
        publish("work_order_ready", {"work_order_id": locked.pk})
    return locked


def _coerce(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name.startswith("suggested_window_") and isinstance(value, str):
        parsed = datetime.fromisoformat(value)
        return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed)
    if name == "title":
        return str(value)[:200]
    return value


EDITABLE_FIELDS = frozenset(GENERATED_FIELDS)
# Fields a client may clear with null; every other editable field needs a value.
NULLABLE_FIELDS = frozenset({"estimated_duration_min", "suggested_window_start", "suggested_window_end"})


def _check_changes(changes: dict[str, Any]) -> None:
    for name in sorted(changes):
        if changes[name] is None and name not in NULLABLE_FIELDS:
            raise InvalidInput(f"{name}: may not be null.", field=name)
    if "priority" in changes and changes["priority"] not in Priority.values:
        raise InvalidInput(f"Unknown priority {changes['priority']!r}.", field="priority")
    for name in ("suggested_window_start", "suggested_window_end"):
        value = changes.get(name)
        if isinstance(value, str):
            try:
                changes[name] = _coerce(name, value)
            except ValueError:
                raise InvalidInput(f"{name}: not an ISO 8601 date-time: {value!r}.", field=name) from None


def _check_window(work_order: WorkOrder) -> None:
    start, end = work_order.suggested_window_start, work_order.suggested_window_end
    if start is not None and end is not None and end <= start:
        raise InvalidInput(
            "suggested_window_end: must be after suggested_window_start.",
            field="suggested_window_end",
            suggested_window_start=start.isoformat(),
        )


def work_order_update(
    *,
    work_order: WorkOrder | int,
    actor: AbstractBaseUser | None,
    changes: dict[str, Any],
    to_status: str | None = None,
    note: str = "",
) -> WorkOrder:
    """Edit a work order's plan fields (and optionally transition it), audited."""
    unknown = set(changes) - EDITABLE_FIELDS
    if unknown:
        raise InvalidInput(f"Not editable: {', '.join(sorted(unknown))}.", field=sorted(unknown)[0])
    changes = dict(changes)
    _check_changes(changes)
    with transaction.atomic():
        locked = _lock(work_order)
        if changes:
            for name, value in changes.items():
                setattr(locked, name, _coerce(name, value))
            _check_window(locked)
            locked.save()
            audit_record(
                actor=actor,
                action="work_order.update",
                target_type="work_order",
                target_id=locked.pk,
                details={"fields": sorted(changes), "note": note[:500]},
            )
        if to_status and to_status != locked.status:
            if to_status not in S.values:
                raise InvalidInput(f"Unknown status {to_status!r}.", field="to_status")
            _transition_locked(locked, to_status, actor=actor, note=note)
    return locked


def work_order_raise_priority(
    *, work_order: WorkOrder | int, priority: str, actor: AbstractBaseUser | None, reason: str = ""
) -> WorkOrder:
    """Raise (never lower) a work order's priority, e.g. on alarm escalation."""
    with transaction.atomic():
        locked = _lock(work_order)
        if PRIORITY_RANK[priority] > PRIORITY_RANK[locked.priority]:
            before = locked.priority
            locked.priority = priority
            locked.save(update_fields=["priority", "updated_at"])
            audit_record(
                actor=actor,
                action="work_order.priority_raised",
                target_type="work_order",
                target_id=locked.pk,
                details={"from": before, "to": priority, "reason": reason[:500]},
            )
    return locked
