"""What the agents submit: the Investigator's RCA (→ analyzed) and the Generator's order (→ open)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from core.events import publish
from workorders.choices import WorkOrderStatus
from workorders.models import WorkOrder
from workorders.services.edits import GENERATED_FIELDS, coerce_field
from workorders.services.lifecycle import failure_mode_from_rca, lock_work_order, transition_locked

S = WorkOrderStatus


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
        locked = lock_work_order(work_order)
        if locked.status != S.DETECTED:
            return None
        summary = str(rca.get("root_cause") or "").strip()
        if rca.get("recommended_action"):
            summary = f"{summary} Recommended: {rca['recommended_action']}".strip()
        locked.rca_summary = summary[:4000]
        locked.confidence = max(0.0, min(1.0, float(rca.get("confidence") or 0.0)))
        locked.rca_details = {**rca, "failure_mode": failure_mode_from_rca(rca), "agent": agent, "fallback": fallback}
        # Entering analyzed records the failure, announces rca_ready and queues the Generator.
        transition_locked(locked, S.ANALYZED, actor=actor, note=f"RCA by {agent}", details={"fallback": fallback})
    return locked


def work_order_apply_generated(
    *, work_order: WorkOrder | int, order: dict[str, Any], agent: str, actor: AbstractBaseUser | None
) -> WorkOrder | None:
    """Write the generated repair order and move the order to `open`; None if no longer `analyzed`."""
    with transaction.atomic():
        locked = lock_work_order(work_order)
        if locked.status != S.ANALYZED:
            return None
        for name in GENERATED_FIELDS:
            if name in order and order[name] is not None:
                setattr(locked, name, coerce_field(name, order[name]))
        locked.generated_by_agent = agent
        transition_locked(locked, S.OPEN, actor=actor, note=f"Repair order by {agent}")
        publish("work_order_ready", {"work_order_id": locked.pk})
    return locked
