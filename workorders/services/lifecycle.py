"""The one lifecycle service: transitions along the map, closing side effects, priority raises."""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q

from core.audit import audit_record
from core.errors import InvalidInput
from core.events import publish
from core.transitions import Move, StateMachine
from core.transitions import transition_locked as transition_locked_row
from sentinel.models import Alarm, Cell
from sentinel.services.alarms import alarm_unshelve_for_work_order_closed
from workorders.choices import (
    CLOSED_STATUSES,
    PRIORITY_RANK,
    TRANSITIONS,
    FailureVerification,
    WorkOrderStatus,
    allowed_transitions,
)
from workorders.dispatch import generation_dispatch
from workorders.events import WORK_ORDER_UPDATED, work_order_updated_in_place
from workorders.models import FailureHistory, WorkOrder, WorkOrderEvent
from workorders.services.parts import part_shortages

logger = logging.getLogger(__name__)
S = WorkOrderStatus


def lock_work_order(work_order: WorkOrder | int) -> WorkOrder:
    """The row, locked for the rest of the caller's transaction, after its cell's row — the intake
    lock, which comes before any work order (docs/KERNEL.md). Taken together in one FOR UPDATE the
    two rows lock in no set order. (Taken without the cell, a change to the order once deadlocked
    with an alarm intake through the audit chain's tail, which audited writes then locked; they no
    longer do — core.audit seals after commit — but the documented order still holds.)"""
    pk = work_order.pk if isinstance(work_order, WorkOrder) else work_order
    list(Cell.objects.select_for_update(of=("self",)).filter(work_orders__pk=pk).values_list("pk"))
    return WorkOrder.objects.select_for_update(of=("self",)).select_related("cell").get(pk=pk)


WORK_ORDER_MACHINE = StateMachine("work order", TRANSITIONS, request_field="to_status", sort_allowed=False)


def illegal_message(work_order: WorkOrder, to_status: str) -> str:
    return f"Work order {work_order.pk} cannot go from {work_order.status} to {to_status}."


def _on_move(work_order: WorkOrder, move: Move) -> None:
    if move.from_state == S.ON_HOLD:
        work_order.hold_reason = ""  # resumed or closed: it no longer waits
    if move.to_state == S.OPEN:
        # The repair order is written: required parts the equipment's stock cannot cover are flagged.
        work_order.part_shortages = part_shortages(work_order)
        if work_order.part_shortages:
            move.details["part_shortages"] = work_order.part_shortages


def transition_locked(
    work_order: WorkOrder,
    to_status: str,
    *,
    actor: AbstractBaseUser | None,
    note: str = "",
    details: dict | None = None,
) -> WorkOrder:
    """Apply one transition to a row already locked by the caller.

    Entering `analyzed` needs the RCA on the row (set by the caller: an agent's or a person's);
    it then records the failure, announces `rca_ready` and queues the Generator.
    """
    WORK_ORDER_MACHINE.check(work_order.status, to_status, message=illegal_message(work_order, to_status))
    if to_status == S.ANALYZED and not work_order.rca_summary.strip():
        raise InvalidInput(
            f"Moving work order {work_order.pk} to analyzed needs its root cause: give rca_summary.",
            field="rca_summary",
            code="rca_required",
        )
    move = transition_locked_row(
        WORK_ORDER_MACHINE,
        work_order,
        to_status,
        actor=actor,
        target_type="work_order",
        details=details,
        on_move=_on_move,
        message=illegal_message,
        audit=lambda m: (
            "work_order.transition",
            {"from": m.from_state, "to": m.to_state, "note": note[:500], **m.details},
        ),
        event=lambda m: (
            WORK_ORDER_UPDATED,
            {
                "work_order_id": work_order.pk,
                "status": m.to_state,
                "from_status": m.from_state,
                "change": "transition",
                "actor": actor_name(actor),
            },
        ),
    )
    WorkOrderEvent.objects.create(
        work_order=work_order,
        from_status=move.from_state,
        to_status=to_status,
        actor=actor if actor is not None and actor.is_authenticated else None,
        note=note[:500],
        details=move.details,
    )
    if to_status == S.ANALYZED:
        _on_analyzed(work_order)
    if to_status in CLOSED_STATUSES:
        _on_close(work_order, actor)
    return work_order


def actor_name(actor: AbstractBaseUser | None) -> str:
    return actor.get_username() if actor is not None and actor.is_authenticated else "system"


def failure_mode_from_rca(rca: dict[str, Any]) -> str:
    """`failure_mode` when given, else the slug the root cause starts with (`bearing_wear: …`)."""
    mode = str(rca.get("failure_mode") or "").strip()
    if not mode:
        head = str(rca.get("root_cause") or "").split(":", 1)[0].split(" ", 1)[0].strip().lower()
        mode = head if head.replace("_", "").isalpha() and "_" in head else "unknown"
    return mode[:64]


def _on_analyzed(work_order: WorkOrder) -> None:
    """The RCA is known: a failure-history row (not for a fallback RCA), `rca_ready`, the Generator."""
    rca = work_order.rca_details or {}
    fallback = bool(rca.get("fallback"))
    if not fallback:
        FailureHistory.objects.create(
            cell=work_order.cell,
            failure_time=work_order.trigger_anomaly_time or work_order.created_at,
            failure_mode=failure_mode_from_rca(rca),
            root_cause=str(rca.get("root_cause") or work_order.rca_summary)[:4000],
            signal_patterns=rca.get("signal_patterns") or {},
            work_order=work_order,
            # A proposal until a technician confirms or corrects it when the order completes.
            verification=FailureVerification.PROPOSED,
        )
    confidence = work_order.confidence if work_order.confidence is not None else 0.0
    publish(
        "rca_ready", {"work_order_id": work_order.pk, "rca_summary": work_order.rca_summary, "confidence": confidence}
    )
    if not fallback:  # a fallback RCA waits for a person; the Generator has nothing to write from
        generation_dispatch(work_order.pk)  # an outbox row in this transaction (core.dispatch)


def _record_manual_rca(
    work_order: WorkOrder, *, rca_summary: str, confidence: float | None, actor: AbstractBaseUser | None
) -> None:
    """A person's root cause on the locked row, shaped like an agent's so the same effects follow."""
    summary = rca_summary.strip()
    if not summary:
        raise InvalidInput(
            f"Moving work order {work_order.pk} to analyzed needs its root cause: give rca_summary.",
            field="rca_summary",
            code="rca_required",
        )
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        raise InvalidInput("confidence: must be between 0 and 1.", field="confidence")
    by = actor.get_username() if actor is not None and actor.is_authenticated else "system"
    rca = {"root_cause": summary, "recorded_by": by, "agent": "", "manual": True, "fallback": False}
    work_order.rca_summary = summary[:4000]
    work_order.confidence = 1.0 if confidence is None else confidence  # a person's RCA is confirmed unless said
    work_order.rca_details = {**rca, "failure_mode": failure_mode_from_rca(rca), "signal_patterns": {}}


def transition_with_rca_locked(
    work_order: WorkOrder,
    to_status: str,
    *,
    actor: AbstractBaseUser | None,
    note: str = "",
    rca_summary: str | None = None,
    confidence: float | None = None,
) -> WorkOrder:
    """A person's move on a locked row; a move to `analyzed` carries the root cause they found."""
    if to_status not in S.values:
        raise InvalidInput(f"Unknown status {to_status!r}.", field="to_status", allowed=list(S.values))
    if rca_summary is not None and to_status != S.ANALYZED:
        raise InvalidInput("rca_summary is recorded only with a move to analyzed.", field="rca_summary")
    if to_status == S.ANALYZED and to_status in allowed_transitions(work_order.status):
        _record_manual_rca(work_order, rca_summary=rca_summary or "", confidence=confidence, actor=actor)
    details = {"manual_rca": True} if to_status == S.ANALYZED else None
    return transition_locked(work_order, to_status, actor=actor, note=note, details=details)


def work_order_transition(
    *,
    work_order: WorkOrder | int,
    to_status: str,
    actor: AbstractBaseUser | None,
    note: str = "",
    rca_summary: str | None = None,
    confidence: float | None = None,
) -> WorkOrder:
    """Move a work order along the lifecycle map; illegal moves raise Conflict(allowed=[...]).

    A move to `analyzed` needs `rca_summary` (422 naming it otherwise) and then queues the
    Generator exactly like an agent's RCA.
    """
    if to_status not in S.values:
        raise InvalidInput(f"Unknown status {to_status!r}.", field="to_status", allowed=list(S.values))
    with transaction.atomic():
        if to_status in CLOSED_STATUSES:
            _lock_alarms_waiting_on(work_order)  # alarm rows before the work-order row
        locked = lock_work_order(work_order)
        return transition_with_rca_locked(
            locked, to_status, actor=actor, note=note, rca_summary=rca_summary, confidence=confidence
        )


def _alarms_waiting_on(work_order: WorkOrder):
    """The order's alarms shelved "until the work order closes"."""
    return Alarm.objects.filter(
        pk__in=sorted(alarm_ids_of(work_order)), shelved_until_work_order_closes=True, state="shelved"
    )


def _lock_alarms_waiting_on(work_order: WorkOrder | int) -> None:
    """Lock order (docs/KERNEL.md): sentinel rows before workorders rows. Closing an order
    unshelves the alarms waiting on it, so the close locks them (pk order) before the order,
    as the detector does (alarm, then the receivers' work order)."""
    pk = work_order.pk if isinstance(work_order, WorkOrder) else work_order
    found = WorkOrder.objects.filter(pk=pk).only("pk", "triggered_by_alarm").first()
    if found is not None:
        list(_alarms_waiting_on(found).select_for_update().order_by("pk").values_list("pk"))


def _unshelve_waiting_alarm(alarm_id: int, work_order_id: int, actor: AbstractBaseUser | None) -> None:
    try:
        with transaction.atomic():
            alarm_unshelve_for_work_order_closed(alarm=alarm_id, actor=actor, work_order_id=work_order_id)
    except Exception:  # closing the order must not fail because an alarm moved on meanwhile
        logger.exception("Could not unshelve alarm %s for work order %s", alarm_id, work_order_id)


def _on_close(work_order: WorkOrder, actor: AbstractBaseUser | None) -> None:
    """Closing an order lets sentinel unshelve the alarms waiting on it. It does not touch the
    failure row: only a completion report (services/execution.py) confirms or corrects the
    proposed cause and records when the repair ended.

    The work order is locked by now, so this never waits for an alarm lock (that would invert
    the lock order): alarms this transaction holds (work_order_transition locks them first) or
    nobody holds are unshelved here; one another transaction holds is unshelved right after
    commit, in a transaction of its own.
    """
    waiting = set(_alarms_waiting_on(work_order).values_list("pk", flat=True))
    if not waiting:
        return
    free = set(
        Alarm.objects.select_for_update(skip_locked=True).filter(pk__in=sorted(waiting)).values_list("pk", flat=True)
    )
    pk = work_order.pk
    for alarm_id in sorted(waiting):
        if alarm_id in free:
            _unshelve_waiting_alarm(alarm_id, pk, actor)
        else:
            transaction.on_commit(lambda alarm_id=alarm_id: _unshelve_waiting_alarm(alarm_id, pk, actor))


def alarm_ids_of(work_order: WorkOrder) -> set[int]:
    """The alarm that opened the order and every alarm that joined it (a repeat of its signal or
    another signal of its cell in the same episode)."""
    ids = {work_order.triggered_by_alarm_id} if work_order.triggered_by_alarm_id else set()
    joined = Q(details__has_key="repeat_alarm_id") | Q(details__has_key="episode_alarm_id")
    for details in work_order.events.filter(joined).values_list("details", flat=True):
        ids.add(int(details.get("repeat_alarm_id") or details["episode_alarm_id"]))
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
            WorkOrderEvent.objects.create(
                work_order=locked,
                from_status=locked.status,
                to_status=locked.status,
                actor=actor if actor is not None and actor.is_authenticated else None,
                note=(f"Priority raised {before} → {priority}" + (f": {reason}" if reason else ""))[:500],
                details={"priority_raised": {"from": before, "to": priority}},
            )
            work_order_updated_in_place(locked.pk, locked.status, "priority_raised", actor_name(actor))
    return locked
