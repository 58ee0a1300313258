"""Work execution over HTTP (added to the workorders router, so under /api/v1/workorders): assign
from the roster, start, hold, cancel, complete with a report; the failure-code list and the RCA
accuracy (confirmed / corrected). Operators act; approvers read."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone
from ninja import Query, Router, Schema
from pydantic import ConfigDict, Field

from core.access import APPROVER, OPERATOR, require_any_scope, require_scopes
from core.json_types import NOT_BLANK, BodyRowId, RowId, WholeNumber, json_schema_when, not_blank_text
from workorders import selectors
from workorders.choices import allowed_transitions
from workorders.models import ShiftAssignment, WorkOrder
from workorders.services.execution import (
    assignment_conflicts,
    work_order_assign,
    work_order_cancel,
    work_order_complete,
    work_order_hold,
    work_order_start,
)

router = Router(tags=["work execution"])

HoldReasonName = Literal["waiting_parts", "waiting_permit", "production_window", "waiting_skills", "other"]
CODE = r"^[A-Za-z0-9_.\-]{1,40}$"


class AssignIn(Schema):
    shift_assignment_id: BodyRowId = Field(description="A row of the shift roster.")


class StartIn(Schema):
    note: str = Field(default="", max_length=500)


class HoldIn(Schema):
    # A hold for "other" needs a note saying why (workorders.services.execution.work_order_hold):
    # stated in the schema as if/then, so a client checking it knows the rule.
    model_config = ConfigDict(
        json_schema_extra=json_schema_when(
            {"reason": {"const": "other"}}, {"properties": {"note": {"pattern": NOT_BLANK}}, "required": ["note"]}
        )
    )
    reason: HoldReasonName
    note: str = Field(default="", max_length=500)


class CancelIn(Schema):
    reason: str = not_blank_text(500)


class PartUsedIn(Schema):
    ref: str = Field(min_length=1, max_length=64)
    qty: WholeNumber = Field(ge=1, le=1000)


class CompleteIn(Schema):
    # A corrected RCA needs the actual root cause (work_order_complete), stated as if/then on the verdict
    model_config = ConfigDict(
        json_schema_extra=json_schema_when(
            {"rca_verdict": {"const": "corrected"}},
            {"properties": {"actual_root_cause": {"pattern": NOT_BLANK}}, "required": ["actual_root_cause"]},
        )
    )
    work_done: str = not_blank_text(4000)
    problem_code: str = Field(
        pattern=CODE, description="A problem of the cell's failure class, e.g. PUMP.bearing_wear."
    )
    cause_code: str = Field(pattern=CODE)
    remedy_code: str = Field(pattern=CODE)
    rca_verdict: Literal["confirmed", "corrected"] = Field(description="Was the proposed root cause right?")
    actual_root_cause: str = Field(default="", max_length=4000, description="Required when corrected.")
    parts_used: list[PartUsedIn] = Field(default_factory=list, max_length=30)
    # Strict: a number (3, 3.5), not true (would be 1.0) or "2"; NaN and infinities are refused too.
    labour_hours: float = Field(gt=0, le=1000, strict=True, allow_inf_nan=False)


def execution_detail(work_order_id: int) -> dict[str, Any]:
    wo = selectors.get_work_order(work_order_id)
    data = selectors.work_order_as_dict(wo, full=True)
    data["allowed_transitions"] = allowed_transitions(wo.status)
    data["events"] = [
        {
            "from_status": e.from_status,
            "to_status": e.to_status,
            "actor": e.actor.get_username() if e.actor else "system",
            "note": e.note,
            "details": e.details,
            "time": e.created_at.isoformat(),
        }
        for e in wo.events.select_related("actor")
    ]
    data["rca_accuracy"] = selectors.rca_accuracy(cell_id=wo.cell_id)
    return data


@router.get("/execution/failure-codes")
def failure_codes(request: HttpRequest, cell_id: RowId | None = None) -> dict[str, Any]:
    """The code list (class → problems, causes, remedies); with cell_id, only that cell's class."""
    require_any_scope(request.user, OPERATOR, APPROVER)
    equipment_type = selectors.get_cell(cell_id).equipment_type if cell_id is not None else None
    return selectors.failure_codes(equipment_type)


@router.get("/execution/rca-accuracy")
def rca_accuracy(request: HttpRequest, cell_id: RowId | None = None) -> dict[str, Any]:
    """How many RCAs technicians confirmed and corrected when completing orders."""
    require_any_scope(request.user, OPERATOR, APPROVER)
    return selectors.rca_accuracy(cell_id=cell_id)


@router.get("/{work_order_id}/execution")
def get_execution(request: HttpRequest, work_order_id: int) -> dict[str, Any]:
    require_any_scope(request.user, OPERATOR, APPROVER)
    return execution_detail(work_order_id)


@router.get("/{work_order_id}/roster")
def roster(request: HttpRequest, work_order_id: int, days: int = Query(3, ge=1, le=14)) -> dict[str, Any]:
    """Shift-roster rows from today on for the order's line, each with its assignment warnings."""
    require_any_scope(request.user, OPERATOR, APPROVER)
    wo = selectors.get_work_order(work_order_id)
    today = timezone.localdate()
    shifts = ShiftAssignment.objects.filter(
        Q(line_id=wo.cell.line_id) | Q(line__isnull=True),
        date__gte=today - timedelta(days=1),
        date__lt=today + timedelta(days=days),
        ends_at__gt=timezone.now(),
    ).order_by("starts_at", "technician")[:200]
    items = [
        {
            "id": s.pk,
            "technician": s.technician,
            "role": s.role,
            "skills": s.skills,
            "date": s.date.isoformat(),
            "shift": s.shift,
            "starts_at": s.starts_at.isoformat(),
            "ends_at": s.ends_at.isoformat(),
            "conflicts": assignment_conflicts(wo, s),
        }
        for s in shifts
    ]
    return {"work_order_id": wo.pk, "count": len(items), "items": items}


def _order(work_order_id: int) -> WorkOrder:
    return selectors.get_work_order(work_order_id)


@router.post("/{work_order_id}/assign")
def assign(request: HttpRequest, work_order_id: int, payload: AssignIn) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    _, conflicts = work_order_assign(
        work_order=_order(work_order_id), shift_assignment=payload.shift_assignment_id, actor=request.user
    )
    return {**execution_detail(work_order_id), "conflicts": conflicts}


@router.post("/{work_order_id}/start")
def start(request: HttpRequest, work_order_id: int, payload: StartIn | None = None) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    work_order_start(work_order=_order(work_order_id), actor=request.user, note=payload.note if payload else "")
    return execution_detail(work_order_id)


@router.post("/{work_order_id}/hold")
def hold(request: HttpRequest, work_order_id: int, payload: HoldIn) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    work_order_hold(work_order=_order(work_order_id), reason=payload.reason, actor=request.user, note=payload.note)
    return execution_detail(work_order_id)


@router.post("/{work_order_id}/cancel")
def cancel(request: HttpRequest, work_order_id: int, payload: CancelIn) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    work_order_cancel(work_order=_order(work_order_id), actor=request.user, reason=payload.reason)
    return execution_detail(work_order_id)


@router.post("/{work_order_id}/complete")
def complete(request: HttpRequest, work_order_id: int, payload: CompleteIn) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    work_order_complete(
        work_order=_order(work_order_id),
        actor=request.user,
        work_done=payload.work_done,
        problem_code=payload.problem_code,
        cause_code=payload.cause_code,
        remedy_code=payload.remedy_code,
        rca_verdict=payload.rca_verdict,
        actual_root_cause=payload.actual_root_cause,
        parts_used=[p.model_dump() for p in payload.parts_used],
        labour_hours=payload.labour_hours,
    )
    return execution_detail(work_order_id)
