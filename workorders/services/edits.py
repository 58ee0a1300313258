"""Human and agent edits of a work order's plan fields (title, actions, parts, window, …)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.audit import audit_record
from core.errors import Conflict, InvalidInput
from workorders.choices import CLOSED_STATUSES, Priority, WorkOrderStatus
from workorders.events import work_order_updated_in_place
from workorders.models import WorkOrder, WorkOrderEvent
from workorders.services.lifecycle import actor_name, lock_work_order, transition_with_rca_locked
from workorders.services.parts import part_shortages
from workorders.shapes import WORK_ORDER_LISTS, work_order_list_clean

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


def coerce_field(name: str, value: Any) -> Any:
    """A plan field's value as the model stores it (ISO strings → aware datetimes, title ≤ 200)."""
    if value is None:
        return None
    if name.startswith("suggested_window_") and isinstance(value, str):
        parsed = datetime.fromisoformat(value)
        return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed)
    if name == "title":
        return str(value)[:200]
    return value


EDITABLE_FIELDS = frozenset(GENERATED_FIELDS)
# The Generator's bound (agents/generator.SubmitWorkOrder): an edit stores no more than it may write.
MAX_DESCRIPTION_CHARS = 5000
# Orders whose repair order is written: their required parts are checked against the stock.
PARTS_FLAGGED_STATUSES = frozenset({WorkOrderStatus.OPEN, WorkOrderStatus.IN_PROGRESS, WorkOrderStatus.ON_HOLD})
# Fields a client may clear with null; every other editable field needs a value.
NULLABLE_FIELDS = frozenset({"estimated_duration_min", "suggested_window_start", "suggested_window_end"})


def _check_changes(changes: dict[str, Any]) -> None:
    for name in sorted(changes):
        if changes[name] is None and name not in NULLABLE_FIELDS:
            raise InvalidInput(f"{name}: may not be null.", field=name)
    description = changes.get("description")
    if description is not None and (not isinstance(description, str) or len(description) > MAX_DESCRIPTION_CHARS):
        raise InvalidInput(f"description: text of at most {MAX_DESCRIPTION_CHARS} characters.", field="description")
    if "priority" in changes and changes["priority"] not in Priority.values:
        raise InvalidInput(f"Unknown priority {changes['priority']!r}.", field="priority")
    for name in sorted(WORK_ORDER_LISTS.keys() & changes.keys()):  # the Generator's shapes, normalised
        changes[name] = work_order_list_clean(name, changes[name])
    for name in ("suggested_window_start", "suggested_window_end"):
        value = changes.get(name)
        if isinstance(value, str):
            try:
                changes[name] = coerce_field(name, value)
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
    rca_summary: str | None = None,
    confidence: float | None = None,
) -> WorkOrder:
    """Edit a work order's plan fields (and optionally transition it), audited.

    The transition is the lifecycle service's: a move to `analyzed` needs `rca_summary`. The plan
    lists (actions, parts, skills) must have the Generator's shapes (`workorders.shapes`): anything
    else is a 422 naming the item (`required_parts.0.qty`), checked before the row is locked.
    """
    unknown = set(changes) - EDITABLE_FIELDS
    if unknown:
        raise InvalidInput(f"Not editable: {', '.join(sorted(unknown))}.", field=sorted(unknown)[0])
    changes = dict(changes)
    _check_changes(changes)
    with transaction.atomic():
        locked = lock_work_order(work_order)
        if changes and locked.status in CLOSED_STATUSES:
            raise Conflict(
                f"Work order {locked.pk} is {locked.status}: a closed order's record is not edited.",
                status=locked.status,
                allowed=[],
            )
        if changes:
            before = {name: getattr(locked, name) for name in ("priority", "title") if name in changes}
            for name, value in changes.items():
                setattr(locked, name, coerce_field(name, value))
            _check_window(locked)
            if "required_parts" in changes and locked.status in PARTS_FLAGGED_STATUSES:
                locked.part_shortages = part_shortages(locked)  # the flags follow the parts now required
            locked.save()
            audit_record(
                actor=actor,
                action="work_order.update",
                target_type="work_order",
                target_id=locked.pk,
                details={"fields": sorted(changes), "note": note[:500]},
            )
            # The order's history on its page: who changed which part of the plan (and from what).
            moved = {k: {"from": v, "to": getattr(locked, k)} for k, v in before.items() if v != getattr(locked, k)}
            said = "; ".join(f"{k} {m['from']} → {m['to']}" for k, m in moved.items() if k == "priority")
            WorkOrderEvent.objects.create(
                work_order=locked,
                from_status=locked.status,
                to_status=locked.status,
                actor=actor if actor is not None and actor.is_authenticated else None,
                note=f"Edited: {', '.join(sorted(changes))}{f' ({said})' if said else ''}"[:500],
                details={"fields": sorted(changes), "changed": moved},
            )
            # Pages showing the order re-read it (the work-order page follows only the bus).
            work_order_updated_in_place(locked.pk, locked.status, "edited", actor_name(actor))
        if to_status and to_status != locked.status:
            transition_with_rca_locked(
                locked, to_status, actor=actor, note=note, rca_summary=rca_summary, confidence=confidence
            )
        elif rca_summary is not None:
            raise InvalidInput("rca_summary is recorded only with a move to analyzed.", field="rca_summary")
    return locked
