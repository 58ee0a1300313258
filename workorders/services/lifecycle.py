"""The one lifecycle service: transitions along the map, closing side effects, priority raises."""

from __future__ import annotations

import logging

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.audit import audit_record
from core.errors import Conflict, InvalidInput
from sentinel.models import Alarm
from workorders.choices import CLOSED_STATUSES, PRIORITY_RANK, WorkOrderStatus, allowed_transitions
from workorders.models import FailureHistory, WorkOrder, WorkOrderEvent

logger = logging.getLogger(__name__)
S = WorkOrderStatus


def lock_work_order(work_order: WorkOrder | int) -> WorkOrder:
    """The row, locked for the rest of the caller's transaction."""
    pk = work_order.pk if isinstance(work_order, WorkOrder) else work_order
    return WorkOrder.objects.select_for_update().select_related("cell").get(pk=pk)


def transition_locked(
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


def work_order_transition(
    *, work_order: WorkOrder | int, to_status: str, actor: AbstractBaseUser | None, note: str = ""
) -> WorkOrder:
    """Move a work order along the lifecycle map; illegal moves raise Conflict(allowed=[...])."""
    if to_status not in S.values:
        raise InvalidInput(f"Unknown status {to_status!r}.", field="to_status", allowed=list(S.values))
    with transaction.atomic():
        locked = lock_work_order(work_order)
        return transition_locked(locked, to_status, actor=actor, note=note)


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


def alarm_ids_of(work_order: WorkOrder) -> set[int]:
    """The alarm that opened the order and every repeat alarm that joined it."""
    ids = {work_order.triggered_by_alarm_id} if work_order.triggered_by_alarm_id else set()
    for details in work_order.events.filter(details__has_key="repeat_alarm_id").values_list("details", flat=True):
        ids.add(int(details["repeat_alarm_id"]))
    return ids


def work_order_raise_priority(
    *, work_order: WorkOrder | int, priority: str, actor: AbstractBaseUser | None, reason: str = ""
) -> WorkOrder:
    """Raise (never lower) a work order's priority, e.g. on alarm escalation."""
    with transaction.atomic():
        locked = lock_work_order(work_order)
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
